package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * What a flow writes for each source record, as rows: {@code sparkmirror verify} compares these, not the source's
 * records, with the target's. The rows go through the writer's own {@link TargetRecords} (the provenance header, MM2's
 * transforms, the schema id rewrite), so verify and the flow cannot disagree on what a record becomes. A record the flow does not write (a
 * transform dropped it, a tolerated failure skipped it, the target already saw it) yields no row; so does one whose
 * transform fails the flow: the flow stops before it, so it is never in the range verify compares.
 */
public final class WrittenRows implements MapPartitionsFunction<Row, Row> {
    private static final long serialVersionUID = 1L;

    private final HashMap<String, String> provenance;  // source, target; null: no provenance header
    private final HashMap<String, Object> transforms;  // TransformStep.of's spec; null: none
    private final HashMap<String, String> remoteTopics;
    private final HashMap<String, String> schemaIds;  // WriterSpec's schema_ids; null: ids kept

    /** {@code spec}: JSON with provenance, transforms, schema_ids (as in the writer's spec) and remote_topics. */
    @SuppressWarnings("unchecked")
    public WrittenRows(String spec) throws Exception {
        Map<String, Object> s = new ObjectMapper().readValue(spec, new TypeReference<Map<String, Object>>() { });
        Map<String, String> stamp = (Map<String, String>) s.get("provenance");
        Map<String, Object> chain = (Map<String, Object>) s.get("transforms");
        Map<String, String> ids = (Map<String, String>) s.get("schema_ids");
        this.provenance = stamp == null ? null : new HashMap<>(stamp);
        this.transforms = chain == null ? null : new HashMap<>(chain);
        this.schemaIds = ids == null ? null : new HashMap<>(ids);
        this.remoteTopics = new HashMap<>((Map<String, String>) s.get("remote_topics"));
    }

    /** {@code rows} (the projection's seven columns) as the flow writes them. */
    public static Dataset<Row> of(Dataset<Row> rows, String spec) throws Exception {
        return rows.mapPartitions(new WrittenRows(spec), Encoders.row(schema()));
    }

    /** The flow's projection (pipeline/flow.py's INPUT_COLUMNS), in and out: the source topic, partition and offset
     * stay the source record's, the rest is what the target gets. Built on use: Spark's types need the catalyst jars,
     * which the rows themselves do not. */
    static StructType schema() {
        return new StructType()
            .add("topic", DataTypes.StringType)
            .add("partition", DataTypes.IntegerType)
            .add("offset", DataTypes.LongType)
            .add("timestamp_ms", DataTypes.LongType)
            .add("key", DataTypes.BinaryType)
            .add("value", DataTypes.BinaryType)
            .add("headers", FlowSource.headers());
    }

    @Override
    public Iterator<Row> call(Iterator<Row> rows) {
        Provenance stamp = provenance == null ? null : new Provenance(provenance.get("source"), provenance.get("target"));
        TargetRecords records = new TargetRecords(stamp, transforms == null ? null : TransformStep.of(transforms),
                                                  WriterSpec.schemaIds(schemaIds));
        return new Written(rows, records, remoteTopics);
    }

    /** The rows one task writes, made as they are read; the chain is closed when they run out or a row fails. */
    private static final class Written implements Iterator<Row> {
        private final Iterator<Row> rows;
        private final TargetRecords records;
        private final Map<String, String> remoteTopics;
        private final Map<String, TaskPartition> partitions = new HashMap<>();
        private Row next;
        private boolean closed;

        Written(Iterator<Row> rows, TargetRecords records, Map<String, String> remoteTopics) {
            this.rows = rows;
            this.records = records;
            this.remoteTopics = remoteTopics;
        }

        @Override
        public boolean hasNext() {
            try {
                while (next == null && rows.hasNext()) {
                    next = written(rows.next());
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
            if (next == null) {
                close();
            }
            return next != null;
        }

        @Override
        public Row next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Row out = next;
            next = null;
            return out;
        }

        private Row written(Row row) {
            String topic = SourceRow.topic(row);
            int partition = SourceRow.partition(row);
            long offset = SourceRow.offset(row);
            TaskPartition p = partitions.computeIfAbsent(topic + "\u0000" + partition, k -> new TaskPartition(
                null, new PartitionLog(topic, partition, remoteTopic(topic)), -1L, -1L, 0));
            ProducerRecord<byte[], byte[]> record;
            try {
                record = records.of(row, p, topic, offset, partition, SourceRow.timestamp(row), SourceRow.key(row),
                                    SourceRow.value(row));
            } catch (RecordPathException e) {
                return null;  // the flow fails on this record: it never writes it (see the class's note)
            }
            if (record == null || record == TransformStep.FAILED) {
                return null;
            }
            List<Row> headers = new ArrayList<>();
            for (Header h : record.headers()) {
                headers.add(RowFactory.create(h.key(), h.value()));
            }
            return RowFactory.create(topic, partition, offset, record.timestamp(), record.key(), record.value(),
                                     headers.isEmpty() ? null : CollectionConverters.asScala(headers).toSeq());
        }

        private String remoteTopic(String topic) {
            String remote = remoteTopics.get(topic);
            if (remote == null) {
                throw new RecordPathException("no remote topic given for source topic '" + topic + "'");
            }
            return remote;
        }

        private void close() {
            if (!closed) {
                closed = true;
                records.close();
            }
        }
    }
}
