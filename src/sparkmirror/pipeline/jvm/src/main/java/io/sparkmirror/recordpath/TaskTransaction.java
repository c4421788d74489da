package io.sparkmirror.recordpath;

import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * Exactly once: one task's transaction on the target (see {@link Transactions}), begun when the task opens and
 * committed with its partitions' next source offsets, or aborted, when it closes; and the positions committed
 * before it, below which the task writes nothing.
 */
final class TaskTransaction {
    private final String id;
    final KafkaProducer<byte[], byte[]> producer;
    private final Map<TopicPartition, OffsetAndMetadata> committed;  // per remote partition: next source offset,
                                                                     // source topic id
    private final WriterSpec spec;

    private TaskTransaction(String id, KafkaProducer<byte[], byte[]> producer,
                            Map<TopicPartition, OffsetAndMetadata> committed, WriterSpec spec) {
        this.id = id;
        this.producer = producer;
        this.committed = committed;
        this.spec = spec;
    }

    /** Take this task's transactional producer (fencing earlier attempts), read the committed positions, begin. */
    static TaskTransaction begin(WriterSpec spec, String id) {
        try {
            KafkaProducer<byte[], byte[]> producer = Transactions.producer(spec.producerConfig, id, spec.channelId);
            try {
                producer.beginTransaction();
            } catch (RuntimeException e) {  // fenced by another attempt, or left in a transaction: start afresh
                Transactions.discard(id, producer);
                producer = Transactions.producer(spec.producerConfig, id, spec.channelId);
                producer.beginTransaction();
            }
            return new TaskTransaction(id, producer, Transactions.committed(spec.targetAdmin, spec.positionsGroup),
                                       spec);
        } catch (Exception e) {
            throw new RecordPathException("exactly-once writing to cluster '" + spec.target + "' could not start "
                + "transactional id '" + id + "': " + e.getMessage() + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** The next source offset committed for the partition, -1 for none; a position committed for an earlier
     * topic of the same name (its id, kept as the offset's metadata, differs) does not count. */
    long committedNext(String topic, TopicPartition remote) {
        OffsetAndMetadata known;
        try {
            known = committed.containsKey(remote) ? committed.get(remote)
                : Transactions.committedOf(spec.targetAdmin, spec.positionsGroup, remote);
        } catch (Exception e) {
            throw new RecordPathException("reading the committed position of " + remote + " on cluster '"
                + spec.target + "' failed: " + e.getMessage() + " (" + e.getClass().getSimpleName() + ")");
        }
        if (known == null) {
            return -1L;
        }
        String planned = spec.sourceTopicIds.get(topic);
        String was = Transactions.topicIdOf(known);
        boolean sameTopic = planned == null || planned.isEmpty() || was == null || was.isEmpty() || was.equals(planned);
        return sameTopic ? known.offset() : -1L;
    }

    /** At the task's end: commit what it wrote with its partitions' next offsets, then report it; abort on any
     * failure or stop (the records are read again, and no consumer reading committed records saw them). */
    void end(MirrorWriter writer, Throwable errorOrNull, TaskPartitions partitions) {
        if (errorOrNull == null && !writer.stopped && writer.error == null) {
            try {
                producer.flush();
                if (writer.error == null && partitions.allAcknowledged()) {
                    commit(partitions.nextPositions(spec.sourceTopicIds));
                    writer.committed();
                    return;
                }
            } catch (RuntimeException e) {
                writer.fail(commitFailure(e));
            }
        }
        abort();
        if (writer.error != null && errorOrNull == null && !writer.stopped) {
            throw new RecordPathException(writer.error);
        }
    }

    /** Commit what the task wrote with {@code next}, its partitions' next source offsets (none: the records only). */
    private void commit(Map<TopicPartition, OffsetAndMetadata> next) {
        if (!next.isEmpty()) {
            producer.sendOffsetsToTransaction(next, new ConsumerGroupMetadata(spec.positionsGroup));
        }
        producer.commitTransaction();
    }

    private String commitFailure(RuntimeException e) {
        return "committing transactional id '" + id + "' on cluster '" + spec.target + "' failed: "
            + e.getMessage() + " (" + e.getClass().getSimpleName() + ")";
    }

    private void abort() {
        try {
            producer.abortTransaction();
        } catch (RuntimeException e) {  // fenced or failed: the next attempt's initTransactions() aborts it
            Transactions.discard(id, producer);
        }
    }
}
