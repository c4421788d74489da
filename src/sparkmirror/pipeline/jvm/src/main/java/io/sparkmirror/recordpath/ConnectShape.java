package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.spark.sql.Row;

/**
 * A source record in the shape MM2's source task gives its transforms, and back to bytes as MM2's worker writes
 * it. In: the remote topic, the source partition, optional BYTES key and value, the timestamp, every header as
 * BYTES, and MM2's source partition ({@code cluster}, {@code topic}, {@code partition}) and offset maps. Out: key,
 * value and headers through MM2's ByteArrayConverter, which takes a BYTES (or schemaless) byte array or null and
 * refuses anything else, so a transform that puts a string where bytes belong fails the record as it does in MM2.
 */
final class ConnectShape {
    private ConnectShape() {
    }

    /** MM2's MirrorUtils.wrapPartition: made once per source partition. */
    static Map<String, Object> sourcePartition(String cluster, String topic, int partition) {
        Map<String, Object> out = new HashMap<>();
        out.put("cluster", cluster);
        out.put("topic", topic);
        out.put("partition", partition);
        return out;
    }

    static SourceRecord in(Map<String, Object> sourcePartition, long offset, String remoteTopic, int partition,
                           long timestamp, byte[] key, byte[] value, List<Row> headers) {
        ConnectHeaders connect = new ConnectHeaders();
        if (headers != null) {
            for (Row h : headers) {
                connect.addBytes(h.getString(0), h.isNullAt(1) ? null : (byte[]) h.get(1));
            }
        }
        return new SourceRecord(sourcePartition, java.util.Collections.singletonMap("offset", offset), remoteTopic,
                                partition, Schema.OPTIONAL_BYTES_SCHEMA, key, Schema.OPTIONAL_BYTES_SCHEMA, value,
                                timestamp, connect);
    }

    /** ByteArrayConverter.fromConnectData: what MM2's worker writes for a key, a value or a header value. */
    static byte[] bytes(Schema schema, Object value, String what) {
        if (schema != null && schema.type() != Schema.Type.BYTES) {
            throw new DataException("Invalid schema type for ByteArrayConverter: " + schema.type() + " (" + what + ")");
        }
        if (value != null && !(value instanceof byte[])) {
            throw new DataException("ByteArrayConverter is not compatible with objects of type " + value.getClass()
                + " (" + what + ")");
        }
        return (byte[]) value;
    }

    static byte[] key(SourceRecord record) {
        return bytes(record.keySchema(), record.key(), "key");
    }

    static byte[] value(SourceRecord record) {
        return bytes(record.valueSchema(), record.value(), "value");
    }

    static List<Header> headers(SourceRecord record) {
        List<Header> out = new ArrayList<>();
        for (org.apache.kafka.connect.header.Header h : record.headers()) {
            out.add(new RecordHeader(h.key(), bytes(h.schema(), h.value(), "header '" + h.key() + "'")));
        }
        return out;
    }
}
