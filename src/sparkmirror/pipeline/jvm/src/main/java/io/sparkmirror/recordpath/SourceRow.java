package io.sparkmirror.recordpath;

import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.spark.sql.Row;

/**
 * A source record as the flow's projection hands it to the writer (pipeline/flow.py): topic, partition, offset,
 * timestamp_ms, key, value, headers (an array of (key, value) rows, in order) and, under a SQL filter
 * ({@code sparkmirror.filter}), the column Spark computed from it, keep.
 */
final class SourceRow {
    private SourceRow() {
    }

    static String topic(Row row) {
        return row.getString(0);
    }

    static int partition(Row row) {
        return row.getInt(1);
    }

    static long offset(Row row) {
        return row.getLong(2);
    }

    /** The source timestamp, never below 0 (the producer refuses a negative one). */
    static long timestamp(Row row) {
        return Math.max(row.getLong(3), 0L);
    }

    static byte[] key(Row row) {
        return row.isNullAt(4) ? null : (byte[]) row.get(4);
    }

    static byte[] value(Row row) {
        return row.isNullAt(5) ? null : (byte[]) row.get(5);
    }

    /** The header rows, or null for none. */
    static List<Row> headers(Row row) {
        return row.isNullAt(6) ? null : row.getList(6);
    }

    /** The SQL filter's verdict: false when the filter drops the record. */
    static boolean kept(Row row) {
        return row.getBoolean(7);
    }

    /** Header rows as the producer's headers, in order and unchanged. */
    static Header[] asHeaders(List<Row> raw) {
        int n = raw == null ? 0 : raw.size();
        Header[] headers = new Header[n];
        for (int i = 0; i < n; i++) {
            headers[i] = header(raw.get(i));
        }
        return headers;
    }

    /** A header row as the producer's header. */
    static Header header(Row h) {
        return new RecordHeader(h.getString(0), h.isNullAt(1) ? null : (byte[]) h.get(1));
    }
}
