package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.list;
import static io.sparkmirror.recordpath.Rows.shown;
import static io.sparkmirror.recordpath.Rows.text;
import static io.sparkmirror.recordpath.Stages.spec;
import static io.sparkmirror.recordpath.Stages.stage;
import static io.sparkmirror.recordpath.Stages.when;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class TransformStepTest {
    private static final Map<String, Object> DROP_X = stage("drop", "DropHeaders", Map.of("headers", "x"));
    private static final Map<String, Object> EXTRACT = stage("extract", "ExtractField$Value", Map.of("field", "f"));
    private static final Map<String, Object> STRING_HEADER = stage("tag", "InsertHeader",
        Map.of("header", "h", "value.literal", "text"));

    private static ProducerRecord<byte[], byte[]> shape(TransformStep step, byte[] provenance) {
        return step.shape(step.sourcePartition("t", 2), "t", 5L, "A.t", 2, 1_000L, bytes("k"), bytes("v"),
                          list(header("x", "1"), header("y", "2")), provenance);
    }

    @Test
    void theRecordComesOutAsMm2sWorkerWritesIt() {
        TransformStep step = TransformStep.of(spec(List.of(DROP_X), "none"));
        ProducerRecord<byte[], byte[]> out = shape(step, null);
        assertEquals("A.t", out.topic());
        assertEquals(2, out.partition());
        assertEquals(1_000L, out.timestamp());
        assertEquals("k", text(out.key()));
        assertEquals("v", text(out.value()));
        assertEquals(List.of("y=2"), shown(out.headers()));
    }

    @Test
    void theProvenanceHeaderIsSetAfterTheChain() {
        TransformStep step = TransformStep.of(spec(List.of(DROP_X), "none"));
        assertEquals(List.of("y=2", Provenance.HEADER + "=C,A"), shown(shape(step, bytes("C,A")).headers()));
    }

    @Test
    void mm2sSourcePartitionNamesTheSourceCluster() {
        TransformStep step = TransformStep.of(spec(List.of(DROP_X), "none"));
        assertEquals(Map.of("cluster", "A", "topic", "t", "partition", 2), step.sourcePartition("t", 2));
    }

    @Test
    void aRecordTheChainDropsIsNull() {
        TransformStep step = TransformStep.of(spec(List.of(when(stage("skip", "Filter", Map.of()), "x", "HasHeaderKey",
                                                                Map.of("name", "x"), false)), "none"));
        assertNull(shape(step, null));
    }

    @Test
    void aFailingStageFailsTheFlowWithErrorsToleranceNone() {
        TransformStep step = TransformStep.of(spec(List.of(EXTRACT), "none"));
        RecordPathException e = assertThrows(RecordPathException.class, () -> shape(step, null));
        assertTrue(e.getMessage().startsWith("record t-2@5: transform 'extract' (ExtractField$Value): "),
                   e.getMessage());
        assertTrue(e.getMessage().endsWith(". With errors.tolerance = none this fails the flow; fix the transform's "
            + "settings, or set errors.tolerance = all to skip such records (counted)"), e.getMessage());
    }

    @Test
    void aFailingStageSkipsTheRecordWithErrorsToleranceAll() {
        TransformStep step = TransformStep.of(spec(List.of(EXTRACT), "all"));
        assertSame(TransformStep.FAILED, shape(step, null));
    }

    @Test
    void aHeaderByteArrayConverterCannotWriteFailsLikeAStage() {
        TransformStep none = TransformStep.of(spec(List.of(STRING_HEADER), "none"));
        RecordPathException e = assertThrows(RecordPathException.class, () -> shape(none, null));
        assertTrue(e.getMessage().startsWith("record t-2@5: Invalid schema type for ByteArrayConverter: STRING "
            + "(header 'h')"), e.getMessage());
        assertSame(TransformStep.FAILED, shape(TransformStep.of(spec(List.of(STRING_HEADER), "all")), null));
    }

    @Test
    void aTransformThatChangesTheTopicFailsWhateverTheTolerance() {
        Map<String, Object> route = stage("route", "RegexRouter", Map.of("regex", "A\\.(.*)", "replacement", "B.$1"));
        for (String tolerance : List.of("none", "all")) {
            TransformStep step = TransformStep.of(spec(List.of(route), tolerance));
            RecordPathException e = assertThrows(RecordPathException.class, () -> shape(step, null));
            assertEquals("a transform moved record t-2@5 to topic 'B.t' partition 2: sparkmirror writes each record "
                + "to its remote topic 'A.t' and partition 2, where offset syncs and checkpoints can follow it. Remove "
                + "the transform; name remote topics with replication.policy.class instead", e.getMessage());
        }
    }
}
