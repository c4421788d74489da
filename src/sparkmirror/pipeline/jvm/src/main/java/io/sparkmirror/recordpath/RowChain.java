package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.Row;

/**
 * A flow's transform chain run on a record's parts, chosen once per task when the chain is built: on the bytes
 * themselves ({@link NativeRowChain}) when every stage is one of Connect's own classes the bytes answer exactly,
 * else on Connect's objects in MM2's shape ({@link ConnectRowChain}). Both give the same record; the bytes save
 * building a SourceRecord with its ConnectHeaders per record, and again per stage that rewrites them.
 */
interface RowChain {
    /** Connect's objects are made and configured either way, so a setting Connect refuses fails the same. */
    static RowChain of(List<Map<String, Object>> stages, ClassLoader loader) {
        TransformChain connect = new TransformChain(stages, loader);
        RowChain bytes = NativeStages.chain(stages, connect);
        return bytes != null ? bytes : new ConnectRowChain(connect);
    }

    /**
     * The record to write to {@code remoteTopic}, with the provenance header set to {@code provenance} after the
     * chain (null: no header); null when a stage dropped it. Throws what the Connect path fails a record with (a
     * {@link RecordPathException} for a record moved off its topic or partition, which no tolerance skips).
     */
    ProducerRecord<byte[], byte[]> apply(Map<String, Object> sourcePartition, String topic, long offset,
                                         String remoteTopic, int partition, long timestamp, byte[] key, byte[] value,
                                         List<Row> headers, byte[] provenance) throws TransformChain.StageFailure;

    /** The transforms' and predicates' close(). */
    void close();

    /** What the chain returned as the producer record: the timestamp as the producer takes it (never below 0). */
    static ProducerRecord<byte[], byte[]> written(String remoteTopic, int partition, Long timestamp, byte[] key,
                                                  byte[] value, List<Header> headers, byte[] provenance) {
        if (provenance != null) {
            Provenance.set(headers, provenance);
        }
        Long ts = timestamp != null && timestamp < 0 ? Long.valueOf(0L) : timestamp;
        return new ProducerRecord<>(remoteTopic, partition, ts, key, value, headers);
    }
}
