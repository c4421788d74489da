package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.list;
import static io.sparkmirror.recordpath.Stages.stage;
import static io.sparkmirror.recordpath.Stages.when;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.DropHeaders;
import org.junit.jupiter.api.Test;

/** Which path a chain takes: the bytes only when every stage is one of Connect's own that they answer exactly. */
class RowChainTest {
    /** A user's class that only extends Connect's (it could change what the stage does). */
    public static final class MyDropHeaders extends DropHeaders<SourceRecord> {
    }

    private static final Map<String, Object> SKIP_HEADER = Map.of("name", "skip");

    private static RowChain of(List<Map<String, Object>> stages) {
        return RowChain.of(stages, Stages.class.getClassLoader());
    }

    private static Map<String, Object> drop() {
        return stage("drop", "DropHeaders", Map.of("headers", "ssn"));
    }

    private static Map<String, Object> skip() {
        return when(stage("skip", "Filter", Map.of()), "p", "HasHeaderKey", SKIP_HEADER, false);
    }

    @Test
    void connectsOwnDropHeadersAndFilterRunOnTheBytes() {
        assertInstanceOf(NativeRowChain.class, of(List.of(drop(), skip())));
        assertInstanceOf(NativeRowChain.class, of(List.of(
            stage("drop", "org.apache.kafka.connect.transforms.DropHeaders", Map.of("headers", "a,b")),
            when(stage("skip", "Filter", Map.of()), "p", "RecordIsTombstone", Map.of(), true),
            when(stage("keep", "Filter", Map.of()), "q", "TopicNameMatches", Map.of("pattern", "A\\..*"), true))));
    }

    @Test
    void anyOtherStageKeepsTheWholeChainOnConnectsObjects() {
        List<Map<String, Object>> others = List.of(
            stage("mine", Closing.Transform.class.getName(), Map.of()),
            stage("sub", MyDropHeaders.class.getName(), Map.of("headers", "ssn")),
            stage("tag", "InsertHeader", Map.of("header", "h", "value.literal", "text")),
            when(stage("skip", "Filter", Map.of()), "p", Closing.Predicate.class.getName(), Map.of(), false),
            stage("drop", "DropHeaders", Map.of("headers", "ssn", "unknown", "1")),
            stage("skip", "Filter", Map.of("replacement", "x")),
            when(stage("skip", "Filter", Map.of()), "p", "HasHeaderKey", Map.of("name", "a", "names", "b"), false));
        for (Map<String, Object> other : others) {
            assertInstanceOf(ConnectRowChain.class, of(List.of(drop(), other, skip())), other.toString());
        }
    }

    @Test
    void settingsConnectRefusesFailAsOnConnectsPath() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> of(List.of(stage("drop", "DropHeaders", Map.of("headers", " ")))));
        assertTrue(e.getMessage().startsWith("'drop' (DropHeaders) refused its settings: "), e.getMessage());
        e = assertThrows(RecordPathException.class, () -> of(List.of(
            when(stage("skip", "Filter", Map.of()), "audit", "TopicNameMatches", Map.of("pattern", "(a"), false))));
        assertTrue(e.getMessage().startsWith("'audit' (TopicNameMatches) refused its settings: "), e.getMessage());
    }

    @Test
    void aHeaderWithoutANameFailsTheRecordAsOnConnectsPath() {
        List<Map<String, Object>> stages = List.of(drop(), skip());
        for (boolean tolerate : new boolean[] {false, true}) {
            TransformStep connect = new TransformStep(new ConnectRowChain(Stages.chain(stages)), tolerate, "A");
            TransformStep bytes = new TransformStep(of(stages), tolerate, "A");
            if (tolerate) {
                assertSame(TransformStep.FAILED, shape(connect));
                assertSame(TransformStep.FAILED, shape(bytes));
            } else {
                assertEquals(assertThrows(RecordPathException.class, () -> shape(connect)).getMessage(),
                             assertThrows(RecordPathException.class, () -> shape(bytes)).getMessage());
            }
        }
    }

    private static Object shape(TransformStep step) {
        return step.shape(step.sourcePartition("t", 0), "t", 5L, "A.t", 0, 1_000L, bytes("k"), bytes("v"),
                          list(header("a", "1"), header(null, "2")), null);
    }
}
