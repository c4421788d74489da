package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.record;
import static io.sparkmirror.recordpath.Rows.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

class WrittenRowsTest {
    private static final String REMOTE = "\"remote_topics\": {\"t\": \"t\"}";
    private static final String DROP_SSN_AND_TESTS = "{\"stages\": ["
        + "{\"alias\": \"pii\", \"type\": \"DropHeaders\", \"config\": {\"headers\": \"ssn\"}, \"negate\": false,"
        + " \"predicate\": null},"
        + "{\"alias\": \"tests\", \"type\": \"Filter\", \"config\": {}, \"negate\": false,"
        + " \"predicate\": {\"alias\": \"isTest\", \"type\": \"HasHeaderKey\", \"config\": {\"name\": \"test\"}}}],"
        + " \"errors_tolerance\": \"none\", \"plugin_path\": [], \"source\": \"A\"}";

    private static List<Row> written(String spec, Row... rows) throws Exception {
        Iterator<Row> out = new WrittenRows(spec).call(List.of(rows).iterator());
        List<Row> list = new ArrayList<>();
        out.forEachRemaining(list::add);
        assertFalse(out.hasNext());
        return list;
    }

    /** A row's headers as "key=value" strings, in order; none for a null column. */
    private static List<String> headers(Row row) {
        List<String> out = new ArrayList<>();
        if (!row.isNullAt(6)) {
            for (Row h : row.<Row>getList(6)) {
                out.add(h.getString(0) + "=" + text(h.isNullAt(1) ? null : (byte[]) h.get(1)));
            }
        }
        return out;
    }

    @Test
    void theProvenanceHeaderIsStampedAndARecordTheTargetSawIsNotWritten() throws Exception {
        List<Row> out = written("{\"provenance\": {\"source\": \"A\", \"target\": \"B\"}, \"transforms\": null, "
                                + REMOTE + "}",
                                record("t", 0, 4L, 1_000L, "k", "v", header("x", "1")),
                                record("t", 0, 5L, 1_001L, "k", "v", header(Provenance.HEADER, "B")));
        assertEquals(1, out.size());
        Row row = out.get(0);
        assertEquals(List.of("t", 0, 4L, 1_000L, "k", "v"),
                     List.of(row.getString(0), row.getInt(1), row.getLong(2), row.getLong(3), text((byte[]) row.get(4)),
                             text((byte[]) row.get(5))));
        assertEquals(List.of("x=1", Provenance.HEADER + "=A"), headers(row));
    }

    @Test
    void theTransformsShapeAndDropRecordsAsTheWriterDoesAndNoHeadersIsNull() throws Exception {
        List<Row> out = written("{\"provenance\": null, \"transforms\": " + DROP_SSN_AND_TESTS + ", " + REMOTE + "}",
                                record("t", 1, 0L, 7L, "k", "v", header("ssn", "123"), header("test", "1")),
                                record("t", 1, 1L, 8L, "k", "w", header("ssn", "123"), header("trace", "t1")),
                                record("t", 1, 2L, 9L, null, "u", header("ssn", "123")));
        assertEquals(2, out.size());
        assertEquals(1L, out.get(0).getLong(2));
        assertEquals(List.of("trace=t1"), headers(out.get(0)));
        assertEquals(2L, out.get(1).getLong(2));
        assertTrue(out.get(1).isNullAt(4) && out.get(1).isNullAt(6));
    }

    @Test
    void aRecordTheFlowWouldFailOnIsNotWritten() throws Exception {
        String failing = DROP_SSN_AND_TESTS.replace("\"DropHeaders\", \"config\": {\"headers\": \"ssn\"}",
                                                    "\"ExtractField$Value\", \"config\": {\"field\": \"f\"}");
        assertEquals(List.of(), written("{\"provenance\": null, \"transforms\": " + failing + ", " + REMOTE + "}",
                                        record("t", 0, 0L, 7L, "k", "not a struct")));
    }
}
