package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.record;
import static io.sparkmirror.recordpath.Rows.shown;
import static io.sparkmirror.recordpath.Rows.text;
import static io.sparkmirror.recordpath.Stages.spec;
import static io.sparkmirror.recordpath.Stages.stage;
import static io.sparkmirror.recordpath.Stages.when;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

class TargetRecordsTest {
    private static final String PROVENANCE = Provenance.HEADER;
    private final TaskPartition partition = new TaskPartition(null, new PartitionLog("t", 1, "A.t"), -1L, -1L, 100);

    private ProducerRecord<byte[], byte[]> of(TargetRecords records, Row row) {
        return records.of(row, partition, SourceRow.topic(row), SourceRow.offset(row), SourceRow.partition(row),
                          SourceRow.timestamp(row), SourceRow.key(row), SourceRow.value(row));
    }

    private static TransformStep step(Map<String, Object> stage, String tolerance) {
        return TransformStep.of(spec(List.of(stage), tolerance));
    }

    @Test
    void withoutProvenanceOrTransformsTheRecordIsCopiedAsItIs() {
        Row row = record("t", 1, 5L, 1_000L, null, "v", header("a", "1"), header("a", "2"));
        ProducerRecord<byte[], byte[]> out = of(new TargetRecords(null, null, null), row);
        assertEquals("A.t", out.topic());
        assertEquals(1, out.partition());
        assertEquals(1_000L, out.timestamp());
        assertNull(out.key());
        assertEquals("v", text(out.value()));
        assertEquals(List.of("a=1", "a=2"), shown(out.headers()));
    }

    @Test
    void theProvenanceHeaderIsStampedOrTheRecordSkipped() {
        TargetRecords records = new TargetRecords(new Provenance("A", "B"), null, null);
        assertEquals(List.of("a=1", PROVENANCE + "=A"),
                     shown(of(records, record("t", 1, 5L, 0L, "k", "v", header("a", "1"))).headers()));
        assertNull(of(records, record("t", 1, 6L, 0L, "k", "v", header(PROVENANCE, "B"))));
        partition.log.skipped(6L);  // as the writer does for a null
        assertEquals(0L, partition.log.report().get("dropped"));  // on the target already: not a drop
    }

    @Test
    void throughTransformsTheProvenanceHeaderIsSetLast() {
        TargetRecords records = new TargetRecords(new Provenance("A", "B"),
                                                  step(stage("drop", "DropHeaders", Map.of("headers", "a")), "none"),
                                                  null);
        ProducerRecord<byte[], byte[]> out = of(records, record("t", 1, 5L, 0L, "k", "v", header(PROVENANCE, "C"),
                                                                header("a", "1"), header("b", "2")));
        assertEquals(List.of(PROVENANCE + "=C,A", "b=2"), shown(out.headers()));
        assertNull(of(records, record("t", 1, 6L, 0L, "k", "v", header(PROVENANCE, "B"))));
        assertEquals(Map.of("cluster", "A", "topic", "t", "partition", 1), partition.sourcePartition);
    }

    @Test
    void aRecordATransformDropsIsCountedAsDropped() {
        TargetRecords records = new TargetRecords(null, step(when(stage("skip", "Filter", Map.of()), "x",
                                                                  "HasHeaderKey", Map.of("name", "x"), false), "none"),
                                                  null);
        assertNull(of(records, record("t", 1, 5L, 0L, "k", "v", header("x", "1"))));
        partition.log.skipped(5L);  // as the writer does for a null
        assertEquals(1L, partition.log.report().get("dropped"));
    }

    @Test
    void aToleratedFailureIsFailed() {
        TargetRecords records = new TargetRecords(null, step(stage("extract", "ExtractField$Value",
                                                                   Map.of("field", "f")), "all"), null);
        assertSame(TransformStep.FAILED, of(records, record("t", 1, 5L, 0L, "k", "v")));
    }

    private static String wire(int id, String payload) {
        return new String(new byte[] {0, 0, 0, 0, (byte) id}, java.nio.charset.StandardCharsets.ISO_8859_1) + payload;
    }

    @Test
    void schemaIdsOfKeysAndValuesBecomeTheTargetsOnTheTopicTheRecordIsWrittenTo() {
        List<String> asked = new java.util.ArrayList<>();
        SchemaIds ids = new SchemaIds((source, remote, isKey, id) -> {
            asked.add(source + ">" + remote + (isKey ? ":key:" : ":value:") + id);
            return id + 10;
        }, false);
        TargetRecords records = new TargetRecords(null, null, ids);
        ProducerRecord<byte[], byte[]> out = of(records, record("t", 1, 5L, 0L, wire(1, "k"), wire(2, "v")));
        assertEquals(11, SchemaIds.schemaId(out.key()));
        assertEquals(12, SchemaIds.schemaId(out.value()));
        assertEquals(List.of("t>A.t:key:1", "t>A.t:value:2"), asked);
        ProducerRecord<byte[], byte[]> plain = of(records, record("t", 1, 6L, 0L, "k", "v"));
        assertEquals("v", new String(plain.value()), "bytes not in the wire format pass");
    }

    @Test
    void anUnknownSchemaIdNamesTheRecordAndTheSettingThatLetsItPass() {
        SchemaIds ids = new SchemaIds((source, remote, isKey, id) -> {
            throw new SchemaResolver.UnknownId("schema id " + id + " is not in the source's schema registry http://a");
        }, false);
        RecordPathException e = org.junit.jupiter.api.Assertions.assertThrows(RecordPathException.class,
            () -> of(new TargetRecords(null, null, ids), record("t", 1, 5L, 0L, "k", wire(7, "v"))));
        assertEquals("t-1@5: schema id 7 is not in the source's schema registry http://a. A consumer on the target "
            + "could not read it; to copy such records unchanged, set sparkmirror.schemas.unknown.ids = pass for the "
            + "flow", e.getMessage());
    }
}
