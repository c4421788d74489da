package io.sparkmirror.recordpath;

import java.util.Arrays;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.Row;

/**
 * The record the target gets for a source record: the same key, value, headers (in order), timestamp and partition
 * in its remote topic, or what the flow's transforms make of it; with the provenance header stamped, unless the
 * target already saw the record.
 */
final class TargetRecords {
    private final Provenance stamp;  // null: no provenance header
    private final TransformStep step;  // null: no transforms

    TargetRecords(Provenance stamp, TransformStep step) {
        this.stamp = stamp;
        this.step = step;
    }

    /** The record to send; null when it is not written (the target saw it, or a transform dropped it: counted
     * as dropped in the partition's log), {@link TransformStep#FAILED} when a transform's failure was tolerated. */
    ProducerRecord<byte[], byte[]> of(Row row, TaskPartition p, String topic, long offset, int partition,
                                      long timestamp, byte[] key, byte[] value) {
        return step == null ? plain(row, p, partition, timestamp, key, value)
            : shaped(row, p, topic, offset, partition, timestamp, key, value);
    }

    /** The record as it was, the provenance header stamped; null when the target already saw it. */
    private ProducerRecord<byte[], byte[]> plain(Row row, TaskPartition p, int partition, long timestamp, byte[] key,
                                                 byte[] value) {
        List<Row> raw = SourceRow.headers(row);
        Header[] headers = stamp == null ? SourceRow.asHeaders(raw) : stamp.stamp(raw);
        if (headers == null) {
            return null;
        }
        return new ProducerRecord<>(p.log.remoteTopic, partition, timestamp, key, value, Arrays.asList(headers));
    }

    /** The record through the flow's transforms: null when the target already saw it or a transform dropped it
     * (counted as dropped), {@link TransformStep#FAILED} when a failure was tolerated. */
    private ProducerRecord<byte[], byte[]> shaped(Row row, TaskPartition p, String topic, long offset, int partition,
                                                  long timestamp, byte[] key, byte[] value) {
        List<Row> raw = SourceRow.headers(row);
        byte[] provenanceValue = null;
        if (stamp != null) {
            provenanceValue = stamp.nextOf(raw);
            if (provenanceValue == null) {
                return null;
            }
        }
        if (p.sourcePartition == null) {
            p.sourcePartition = step.sourcePartition(topic, partition);
        }
        ProducerRecord<byte[], byte[]> out = step.shape(p.sourcePartition, topic, offset, p.log.remoteTopic, partition,
                                                        timestamp, key, value, raw, provenanceValue);
        if (out == null) {
            p.log.dropped();
        }
        return out;
    }

    /** The transforms' and predicates' close(), at the task's end. */
    void close() {
        if (step != null) {
            step.close();
        }
    }
}
