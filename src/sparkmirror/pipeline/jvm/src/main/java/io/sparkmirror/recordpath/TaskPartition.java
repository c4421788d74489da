package io.sparkmirror.recordpath;

import java.util.Map;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.RecordMetadata;

/** One source partition of a writer's task: its log, where the task starts writing it, and the acknowledgement
 * callback of its records (an acknowledgement goes to the log, a refusal to the writer, which fails the task). */
final class TaskPartition implements Callback {
    final PartitionLog log;

    final long committedNext;  // exactly once: records below it are on the target already; else -1
    final long writtenNext;  // records below it are on the target: committed, or reported by an earlier attempt
    final int messageLimit;  // the remote topic's max.message.bytes
    long topicCheckedAt = Long.MIN_VALUE / 2;  // when the source topic's id was last compared
    boolean skipChecked;  // the topic's id was asked of the cluster before the first record below writtenNext
    Map<String, Object> sourcePartition;  // MM2's source partition map, for transforms

    private final MirrorWriter writer;

    TaskPartition(MirrorWriter writer, PartitionLog log, long committedNext, long reportedNext, int messageLimit) {
        this.writer = writer;
        this.log = log;
        this.committedNext = committedNext;
        this.writtenNext = Math.max(committedNext, reportedNext);
        this.messageLimit = messageLimit;
    }

    @Override
    public void onCompletion(RecordMetadata metadata, Exception exception) {
        if (exception == null) {
            int valueBytes = Math.max(metadata.serializedValueSize(), 0);
            log.acked(metadata.offset(), Math.max(metadata.serializedKeySize(), 0) + valueBytes, valueBytes,
                      System.currentTimeMillis());
            return;
        }
        writer.refused(log, exception);
    }
}
