package io.sparkmirror.recordpath;

import java.util.Arrays;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.Row;

/**
 * The record the target gets for a source record: the same key, value, headers (in order), timestamp and partition
 * in its remote topic, or what the flow's transforms make of it; with the provenance header stamped, unless the
 * target already saw the record, and the target registry's schema ids in a key or value of Confluent's wire format
 * when the flow rewrites them.
 */
final class TargetRecords {
    private final Provenance stamp;  // null: no provenance header
    private final TransformStep step;  // null: no transforms
    private final SchemaIds ids;  // null: schema ids kept

    TargetRecords(Provenance stamp, TransformStep step, SchemaIds ids) {
        this.stamp = stamp;
        this.step = step;
        this.ids = ids;
    }

    /** The record to send; null when it is not written (the target saw it, or a transform dropped it: counted
     * as dropped in the partition's log), {@link TransformStep#FAILED} when a transform's failure was tolerated. */
    ProducerRecord<byte[], byte[]> of(Row row, TaskPartition p, String topic, long offset, int partition,
                                      long timestamp, byte[] key, byte[] value) {
        ProducerRecord<byte[], byte[]> out = step == null ? plain(row, p, partition, timestamp, key, value)
            : shaped(row, p, topic, offset, partition, timestamp, key, value);
        return ids == null || out == null || out == TransformStep.FAILED ? out : withTargetIds(out, topic, partition,
                                                                                               offset);
    }

    /** The record with the target's schema ids, in the topic it is written to (a transform may have renamed it). */
    private ProducerRecord<byte[], byte[]> withTargetIds(ProducerRecord<byte[], byte[]> r, String topic, int partition,
                                                         long offset) {
        try {
            byte[] key = ids.rewrite(topic, r.topic(), true, r.key());
            byte[] value = ids.rewrite(topic, r.topic(), false, r.value());
            return key == r.key() && value == r.value() ? r
                : new ProducerRecord<>(r.topic(), r.partition(), r.timestamp(), key, value, r.headers());
        } catch (SchemaResolver.UnknownId e) {
            throw new RecordPathException(topic + "-" + partition + "@" + offset + ": " + e.getMessage() + ". A "
                + "consumer on the target could not read it; to copy such records unchanged, set "
                + "sparkmirror.schemas.unknown.ids = pass for the flow");
        }
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
