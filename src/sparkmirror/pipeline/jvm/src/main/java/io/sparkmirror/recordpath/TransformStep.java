package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.spark.sql.Row;

/**
 * The record path's transform step: a source record in MM2's shape through the flow's chain, and the result as
 * the producer record MM2's worker would write. A chain may drop a record; a failure (a stage's, or the
 * conversion of what it returned) fails the task with {@code errors.tolerance = none} and skips the record with
 * {@code all}, as Connect does. A record may not leave its remote topic or partition: checkpoints and offset
 * translation follow records by those, so such a result fails the task whatever the tolerance.
 */
final class TransformStep {
    /** What {@link #shape} returns for a record skipped by {@code errors.tolerance = all}. */
    static final ProducerRecord<byte[], byte[]> FAILED = new ProducerRecord<>("", null);
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TransformStep.class);

    private final TransformChain chain;
    private final boolean tolerateAll;
    private final String cluster;  // the source cluster's alias, as MM2's source partition names it

    TransformStep(TransformChain chain, boolean tolerateAll, String cluster) {
        this.chain = chain;
        this.tolerateAll = tolerateAll;
        this.cluster = cluster;
    }

    /** {@code spec}: stages, errors_tolerance, plugin_path and source (the writer's "transforms"). */
    @SuppressWarnings("unchecked")
    static TransformStep of(Map<String, Object> spec) {
        ClassLoader loader = PluginClasses.loader((List<String>) spec.get("plugin_path"));
        return new TransformStep(new TransformChain((List<Map<String, Object>>) spec.get("stages"), loader),
                                 "all".equals(spec.get("errors_tolerance")), (String) spec.get("source"));
    }

    Map<String, Object> sourcePartition(String topic, int partition) {
        return ConnectShape.sourcePartition(cluster, topic, partition);
    }

    /**
     * The record to write, null when the chain dropped it, or {@link #FAILED}. {@code provenance}: the provenance
     * header's value to set after the chain (null: no header).
     */
    ProducerRecord<byte[], byte[]> shape(Map<String, Object> sourcePartition, String topic, long offset,
                                         String remoteTopic, int partition, long timestamp, byte[] key, byte[] value,
                                         List<Row> headers, byte[] provenance) {
        SourceRecord out;
        byte[] outKey;
        byte[] outValue;
        List<Header> outHeaders;
        try {
            out = chain.apply(ConnectShape.in(sourcePartition, offset, remoteTopic, partition, timestamp, key, value,
                                              headers));
            if (out == null) {
                return null;
            }
            outKey = ConnectShape.key(out);
            outValue = ConnectShape.value(out);
            outHeaders = ConnectShape.headers(out);
        } catch (TransformChain.StageFailure | RuntimeException e) {
            String what = "record " + topic + "-" + partition + "@" + offset + ": " + e.getMessage();
            if (!tolerateAll) {
                throw new RecordPathException(what + ". With errors.tolerance = none this fails the flow; fix the "
                    + "transform's settings, or set errors.tolerance = all to skip such records (counted)");
            }
            LOG.debug("skipped (errors.tolerance = all): {}", what);
            return FAILED;
        }
        if (!remoteTopic.equals(out.topic()) || out.kafkaPartition() == null || out.kafkaPartition() != partition) {
            throw new RecordPathException("a transform moved record " + topic + "-" + partition + "@" + offset
                + " to topic '" + out.topic() + "' partition " + out.kafkaPartition() + ": sparkmirror writes each "
                + "record to its remote topic '" + remoteTopic + "' and partition " + partition + ", where offset "
                + "syncs and checkpoints can follow it. Remove the transform; name remote topics with "
                + "replication.policy.class instead");
        }
        if (provenance != null) {
            Provenance.set(outHeaders, provenance);
        }
        Long ts = out.timestamp();
        return new ProducerRecord<>(remoteTopic, partition, ts == null ? null : Math.max(ts, 0L), outKey, outValue,
                                    outHeaders);
    }

    void close() {
        chain.close();
    }
}
