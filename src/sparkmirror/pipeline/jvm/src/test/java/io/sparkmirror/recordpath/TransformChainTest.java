package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static io.sparkmirror.recordpath.Stages.chain;
import static io.sparkmirror.recordpath.Stages.stage;
import static io.sparkmirror.recordpath.Stages.when;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

/** The chain with Connect's own transforms and predicates, run as Connect runs a connector's. */
class TransformChainTest {
    private static SourceRecord record(String remoteTopic, String... headerKeys) {
        List<org.apache.spark.sql.Row> headers = new ArrayList<>();
        for (String key : headerKeys) {
            headers.add(Rows.header(key, "1"));
        }
        return ConnectShape.in(ConnectShape.sourcePartition("A", "t", 0), 5L, remoteTopic, 0, 1_000L, bytes("k"),
                               bytes("v"), Rows.list(headers.toArray(new org.apache.spark.sql.Row[0])));
    }

    private static List<String> keys(SourceRecord record) {
        List<String> out = new ArrayList<>();
        for (Header h : record.headers()) {
            out.add(h.key());
        }
        return out;
    }

    @Test
    void dropHeadersRemovesTheNamedHeaders() throws Exception {
        TransformChain chain = chain(List.of(stage("drop", "DropHeaders", Map.of("headers", "a,c"))));
        assertEquals(List.of("b"), keys(chain.apply(record("A.t", "a", "b", "c"))));
    }

    @Test
    void filterWithHasHeaderKeyDropsOnlyTheRecordsWithTheHeader() throws Exception {
        TransformChain chain = chain(List.of(when(stage("skip", "Filter", Map.of()), "marked", "HasHeaderKey",
                                                  Map.of("name", "m"), false)));
        assertNull(chain.apply(record("A.t", "x", "m")));
        assertNotNull(chain.apply(record("A.t", "x")));
    }

    @Test
    void negateAppliesTheStageWhereThePredicateDoesNotHold() throws Exception {
        TransformChain chain = chain(List.of(when(stage("keep", "Filter", Map.of()), "marked", "HasHeaderKey",
                                                  Map.of("name", "m"), true)));
        assertNotNull(chain.apply(record("A.t", "m")));
        assertNull(chain.apply(record("A.t", "x")));
    }

    @Test
    void topicNameMatchesTestsTheRemoteTopic() throws Exception {
        TransformChain chain = chain(List.of(when(stage("skip", "Filter", Map.of()), "audit", "TopicNameMatches",
                                                  Map.of("pattern", "A\\.audit.*"), false)));
        assertNull(chain.apply(record("A.audit-log")));
        assertNotNull(chain.apply(record("A.orders")));
    }

    @Test
    void stagesRunInOrderOnWhatTheOneBeforeReturned() throws Exception {
        TransformChain chain = chain(List.of(
            stage("drop", "DropHeaders", Map.of("headers", "m")),
            when(stage("skip", "Filter", Map.of()), "marked", "HasHeaderKey", Map.of("name", "m"), false)));
        assertEquals(List.of("x"), keys(chain.apply(record("A.t", "x", "m"))));
    }

    @Test
    void aStageThatThrowsIsNamedInTheFailure() {
        TransformChain chain = chain(List.of(stage("extract", "ExtractField$Value", Map.of("field", "f"))));
        TransformChain.StageFailure failure = assertThrows(TransformChain.StageFailure.class,
            () -> chain.apply(record("A.t")));
        assertTrue(failure.getMessage().startsWith("transform 'extract' (ExtractField$Value): "
            + "org.apache.kafka.connect.errors.DataException: "), failure.getMessage());
    }

    @Test
    void settingsATransformRefusesFailWithItsAlias() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> chain(List.of(stage("drop", "DropHeaders", Map.of()))));
        assertTrue(e.getMessage().startsWith("'drop' (DropHeaders) refused its settings: "), e.getMessage());
    }

    @Test
    void settingsAPredicateRefusesFailWithItsAlias() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> chain(List.of(when(stage("skip", "Filter", Map.of()), "marked", "HasHeaderKey", Map.of(), false))));
        assertTrue(e.getMessage().startsWith("'marked' (HasHeaderKey) refused its settings: "), e.getMessage());
    }

    @Test
    void closeClosesEveryTransformAndPredicate() {
        Closing.CLOSED.clear();
        TransformChain chain = chain(List.of(
            when(stage("one", Closing.Transform.class.getName(), Map.of()), "p", Closing.Predicate.class.getName(),
                 Map.of(), false),
            stage("two", Closing.Transform.class.getName(), Map.of())));
        chain.close();
        assertEquals(List.of("transform", "transform", "predicate"), Closing.CLOSED);
    }
}
