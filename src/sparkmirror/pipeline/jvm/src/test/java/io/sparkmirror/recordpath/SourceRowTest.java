package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.headers;
import static io.sparkmirror.recordpath.Rows.shown;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.Test;

class SourceRowTest {
    @Test
    void theProjectionsColumnsAreRead() {
        Row row = RowFactory.create("t", 3, 42L, 1_000L, bytes("k"), bytes("v"),
                                    headers(header("a", "1"), header("b", null), header("a", "2")), false);
        assertEquals("t", SourceRow.topic(row));
        assertEquals(3, SourceRow.partition(row));
        assertEquals(42L, SourceRow.offset(row));
        assertEquals(1_000L, SourceRow.timestamp(row));
        assertArrayEquals(bytes("k"), SourceRow.key(row));
        assertArrayEquals(bytes("v"), SourceRow.value(row));
        assertEquals(List.of("a=1", "b=null", "a=2"), shown(SourceRow.asHeaders(SourceRow.headers(row))));
        assertFalse(SourceRow.kept(row));
    }

    @Test
    void nullKeyValueAndHeadersAreNull() {
        Row row = RowFactory.create("t", 0, 0L, 0L, null, null, null, true);
        assertNull(SourceRow.key(row));
        assertNull(SourceRow.value(row));
        assertNull(SourceRow.headers(row));
        assertEquals(0, SourceRow.asHeaders(null).length);
        assertTrue(SourceRow.kept(row));
    }

    @Test
    void aTimestampBeforeTheEpochIsWrittenAsZero() {
        assertEquals(0L, SourceRow.timestamp(RowFactory.create("t", 0, 0L, -1L)));
    }
}
