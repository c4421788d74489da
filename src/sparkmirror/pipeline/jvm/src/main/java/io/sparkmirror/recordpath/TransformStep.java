package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.spark.sql.Row;

/**
 * The record path's transform step: a source record through the flow's chain (a {@link RowChain}), and the result as
 * the producer record MM2's worker would write. A chain may drop a record; a failure (a stage's, or the
 * conversion of what it returned) fails the task with {@code errors.tolerance = none} and skips the record with
 * {@code all}, as Connect does. A record moved off its remote topic or partition fails the task whatever the
 * tolerance: checkpoints and offset translation follow records by those.
 */
final class TransformStep {
    /** What {@link #shape} returns for a record skipped by {@code errors.tolerance = all}. */
    static final ProducerRecord<byte[], byte[]> FAILED = new ProducerRecord<>("", null);
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TransformStep.class);

    private final RowChain chain;
    private final boolean tolerateAll;
    private final String cluster;  // the source cluster's alias, as MM2's source partition names it

    TransformStep(RowChain chain, boolean tolerateAll, String cluster) {
        this.chain = chain;
        this.tolerateAll = tolerateAll;
        this.cluster = cluster;
    }

    /** {@code spec}: stages, errors_tolerance, plugin_path and source (the writer's "transforms"). */
    @SuppressWarnings("unchecked")
    static TransformStep of(Map<String, Object> spec) {
        ClassLoader loader = PluginClasses.loader((List<String>) spec.get("plugin_path"));
        return new TransformStep(RowChain.of((List<Map<String, Object>>) spec.get("stages"), loader),
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
        try {
            return chain.apply(sourcePartition, topic, offset, remoteTopic, partition, timestamp, key, value, headers,
                               provenance);
        } catch (RecordPathException e) {
            throw e;  // a record moved off its remote topic or partition: fails the task whatever the tolerance
        } catch (TransformChain.StageFailure | RuntimeException e) {
            String what = "record " + topic + "-" + partition + "@" + offset + ": " + e.getMessage();
            if (!tolerateAll) {
                throw new RecordPathException(what + ". With errors.tolerance = none this fails the flow; fix the "
                    + "transform's settings, or set errors.tolerance = all to skip such records (counted)");
            }
            LOG.debug("skipped (errors.tolerance = all): {}", what);
            return FAILED;
        }
    }

    void close() {
        chain.close();
    }
}
