package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.list;
import static io.sparkmirror.recordpath.Rows.shown;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

class ConnectShapeTest {
    private static SourceRecord in(byte[] key) {
        return ConnectShape.in(ConnectShape.sourcePartition("A", "t", 1), 42L, "A.t", 1, 1_000L, key, bytes("v"),
                               list(header("a", "1"), header("b", null)));
    }

    @Test
    void aSourceRecordHasMm2sShape() {
        SourceRecord record = in(bytes("k"));
        assertEquals("A.t", record.topic());
        assertEquals(1, record.kafkaPartition());
        assertEquals(1_000L, record.timestamp());
        assertEquals(Map.of("cluster", "A", "topic", "t", "partition", 1), record.sourcePartition());
        assertEquals(Map.of("offset", 42L), record.sourceOffset());
        assertEquals(Schema.OPTIONAL_BYTES_SCHEMA, record.keySchema());
        assertEquals(Schema.OPTIONAL_BYTES_SCHEMA, record.valueSchema());
        for (Header h : record.headers()) {
            assertEquals(Schema.Type.BYTES, h.schema().type());
        }
    }

    @Test
    void whatComesBackIsTheSameBytes() {
        SourceRecord record = in(null);
        assertNull(ConnectShape.key(record));
        assertArrayEquals(bytes("v"), ConnectShape.value(record));
        assertEquals(List.of("a=1", "b=null"), shown(ConnectShape.headers(record)));
    }

    @Test
    void bytesOrNullPassWithABytesSchemaOrNone() {
        assertArrayEquals(bytes("x"), ConnectShape.bytes(Schema.BYTES_SCHEMA, bytes("x"), "value"));
        assertArrayEquals(bytes("x"), ConnectShape.bytes(null, bytes("x"), "value"));
        assertNull(ConnectShape.bytes(Schema.OPTIONAL_BYTES_SCHEMA, null, "key"));
    }

    @Test
    void aStringSchemaHeaderIsRefused() {
        SourceRecord record = in(bytes("k"));
        record.headers().addString("h", "text");
        DataException e = assertThrows(DataException.class, () -> ConnectShape.headers(record));
        assertEquals("Invalid schema type for ByteArrayConverter: STRING (header 'h')", e.getMessage());
    }

    @Test
    void aValueThatIsNotAByteArrayIsRefused() {
        DataException e = assertThrows(DataException.class, () -> ConnectShape.bytes(null, "text", "value"));
        assertEquals("ByteArrayConverter is not compatible with objects of type class java.lang.String (value)",
                     e.getMessage());
    }
}
