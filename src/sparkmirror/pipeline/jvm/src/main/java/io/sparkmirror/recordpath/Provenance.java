package io.sparkmirror.recordpath;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.spark.sql.Row;

/**
 * The provenance header (policy/provenance.ProvenanceRule): the chain of clusters a record came through, so that
 * identity-named active/active flows never copy a record back to a cluster it already passed.
 */
final class Provenance {
    static final String HEADER = "sparkmirror.provenance";

    private final String source;
    private final String target;
    private final byte[] sourceBytes;

    Provenance(String source, String target) {
        this.source = source;
        this.target = target;
        this.sourceBytes = source.getBytes(StandardCharsets.UTF_8);
    }

    /** The record's headers in order with the header stamped; null when the target already saw the record. */
    Header[] stamp(List<Row> raw) {
        int n = raw == null ? 0 : raw.size();
        Header[] out = new Header[n + 1];
        boolean stamped = false;
        for (int i = 0; i < n; i++) {
            Row h = raw.get(i);
            String name = h.getString(0);
            byte[] value = h.isNullAt(1) ? null : (byte[]) h.get(1);
            if (!stamped && HEADER.equals(name)) {
                value = next(value);
                if (value == null) {
                    return null;
                }
                stamped = true;
            }
            out[i] = new RecordHeader(name, value);
        }
        if (stamped) {
            return java.util.Arrays.copyOf(out, n);
        }
        out[n] = new RecordHeader(HEADER, sourceBytes);
        return out;
    }

    /** The header's next value for a record with these source headers; null when the target already saw it. */
    byte[] nextOf(List<Row> raw) {
        if (raw != null) {
            for (Row h : raw) {
                if (HEADER.equals(h.getString(0))) {
                    return next(h.isNullAt(1) ? null : (byte[]) h.get(1));
                }
            }
        }
        return sourceBytes;
    }

    /** Set the header to {@code value} in headers a transform chain returned (the first one, or a new last one). */
    static void set(List<Header> headers, byte[] value) {
        for (int i = 0; i < headers.size(); i++) {
            if (HEADER.equals(headers.get(i).key())) {
                headers.set(i, new RecordHeader(HEADER, value));
                return;
            }
        }
        headers.add(new RecordHeader(HEADER, value));
    }

    /** As ProvenanceRule.next_value: null when the target is already in the chain. */
    private byte[] next(byte[] value) {
        List<String> chain = new ArrayList<>();
        if (value != null) {
            for (String alias : new String(value, StandardCharsets.UTF_8).split(",")) {
                if (!alias.isEmpty()) {
                    chain.add(alias);
                }
            }
        }
        if (chain.contains(target)) {
            return null;
        }
        if (chain.isEmpty() || !chain.get(chain.size() - 1).equals(source)) {
            chain.add(source);
        }
        return String.join(",", chain).getBytes(StandardCharsets.UTF_8);
    }
}
