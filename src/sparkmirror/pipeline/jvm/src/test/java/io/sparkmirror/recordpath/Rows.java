package io.sparkmirror.recordpath;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import scala.jdk.javaapi.CollectionConverters;

/** Rows as Spark hands them to the writer: a GenericRow whose headers column (an array) holds a Scala Seq of
 * (key, value) rows, which {@code Row.getList} turns into a java.util.List. */
final class Rows {
    private Rows() {
    }

    static byte[] bytes(String text) {
        return text == null ? null : text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    /** One header row; a null value is a null header value. */
    static Row header(String key, String value) {
        return RowFactory.create(key, bytes(value));
    }

    /** The headers column's value: a Scala Seq, as Spark's array column holds it. */
    static Object headers(Row... headers) {
        return CollectionConverters.asScala(new ArrayList<>(Arrays.asList(headers))).toSeq();
    }

    /** The header rows as the writer reads them ({@code row.getList(6)}). */
    static List<Row> list(Row... headers) {
        return RowFactory.create(headers(headers)).getList(0);
    }

    /** A row of the flow's projection (topic, partition, offset, timestamp_ms, key, value, headers). */
    static Row record(String topic, int partition, long offset, long timestamp, String key, String value,
                      Row... headers) {
        return RowFactory.create(topic, partition, offset, timestamp, bytes(key), bytes(value), headers(headers));
    }

    /** As {@link #record}, with a SQL filter's keep column. */
    static Row filtered(String topic, int partition, long offset, boolean keep, Row... headers) {
        return RowFactory.create(topic, partition, offset, 0L, null, bytes("v"), headers(headers), keep);
    }

    /** Producer headers as "key=value" strings, in order. */
    static List<String> shown(Iterable<Header> headers) {
        List<String> out = new ArrayList<>();
        for (Header h : headers) {
            out.add(h.key() + "=" + text(h.value()));
        }
        return out;
    }

    static List<String> shown(Header[] headers) {
        return shown(Arrays.asList(headers));
    }
}
