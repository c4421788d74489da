package io.sparkmirror.recordpath;

import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * From a task's writer to its reader: where a partition's records are already on the target. A task Spark retries
 * reads its partitions again from its epoch's (or batch's) start; its writer skips what an earlier attempt reported,
 * after asking the cluster for the topic's id (a re-created topic's records are not skipped). It then tells the
 * reader, which seeks past those records instead of fetching them for nothing: a Real-Time Mode task retried late
 * in a long epoch would otherwise read minutes of records again (measured: 585,423 records, 2.5 minutes, for a
 * failure 60 s into an epoch; benchmarks/task_retry.py).
 *
 * <p>Per thread: a task's reader and writer run in its task thread, one task at a time; the reader clears what a
 * thread's earlier task left when it starts and when it ends.
 */
final class SkipAhead {
    private static final ThreadLocal<Map<TopicPartition, Long>> WRITTEN = new ThreadLocal<>();

    private SkipAhead() {
    }

    /** The writer: this task's records of the partition below {@code next} are on the target. */
    static void written(String topic, int partition, long next) {
        Map<TopicPartition, Long> written = WRITTEN.get();
        if (written == null) {
            WRITTEN.set(written = new HashMap<>());
        }
        written.merge(new TopicPartition(topic, partition), next, Math::max);
    }

    /** The reader: what its writer said since the last call (null when nothing), forgotten. */
    static Map<TopicPartition, Long> take() {
        Map<TopicPartition, Long> written = WRITTEN.get();
        if (written != null) {
            WRITTEN.remove();
        }
        return written;
    }

    /** A task starts or ends in this thread: nothing an earlier one said applies. */
    static void clear() {
        WRITTEN.remove();
    }
}
