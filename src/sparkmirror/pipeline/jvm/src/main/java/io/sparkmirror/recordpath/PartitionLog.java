package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * One source partition as one writer sent it: upstream offsets in send order, downstream offsets in
 * acknowledgement order (the idempotent producer acknowledges a partition's records in send order), so the
 * first {@code acked} entries of both arrays pair a record's source offset with its target offset.
 *
 * <p>{@link #report} hands out the acknowledged prefix not reported yet, as exact offset syncs: the first and
 * last record and both records around every place where the two offset sequences stop advancing one by one.
 * It also carries MM2's per-partition metrics of the same records: record age (send time minus the source
 * timestamp, MM2's {@code record-age-ms}), replication latency (acknowledgement time minus the source timestamp,
 * MM2's {@code replication-latency-ms}) and value bytes (MM2's {@code byte-count} counts values only).
 * Thread-safe: the task thread sends, the producer's I/O thread acknowledges, the reporter reports.
 */
final class PartitionLog {
    final String topic;
    final int partition;
    final String remoteTopic;
    private long[] upstream = new long[64];
    private long[] downstream = new long[64];
    private long[] timestamps = new long[64];  // source timestamp of each sent record, beside `upstream`
    private int sent;
    private int acked;
    private long skipped;
    private long dropped;             // of the skipped: dropped by a transform or filter
    private long failed;              // of the skipped: a transform failed, errors.tolerance = all
    private long bytes;               // of the acknowledged records not reported yet
    private long seenNext = -1;       // one past the last offset seen, written or skipped
    private long reportedNext = -1;   // next_upstream of the last report
    private long valueBytes;          // value bytes of the acknowledged records not reported yet
    private final Stats age = new Stats();      // of the records sent since the last report
    private final Stats latency = new Stats();  // of the records acknowledged since the last report

    PartitionLog(String topic, int partition, String remoteTopic) {
        this.topic = topic;
        this.partition = partition;
        this.remoteTopic = remoteTopic;
    }

    synchronized void sent(long offset, long timestamp, long now) {
        if (sent == upstream.length) {
            upstream = Arrays.copyOf(upstream, sent * 2);
            timestamps = Arrays.copyOf(timestamps, sent * 2);
        }
        timestamps[sent] = timestamp;
        upstream[sent++] = offset;
        seenNext = offset + 1;
        age.add(now - timestamp);
    }

    synchronized void skipped(long offset) {
        skipped++;
        seenNext = offset + 1;
    }

    /** A record a transform or filter dropped; {@link #skipped} is called for it too. */
    synchronized void dropped() {
        dropped++;
    }

    /** A record skipped because a transform failed on it and errors.tolerance = all. */
    synchronized void failed(long offset) {
        failed++;
        skipped(offset);
    }

    synchronized void acked(long offset, int recordBytes, int recordValueBytes, long now) {
        if (acked == downstream.length) {
            downstream = Arrays.copyOf(downstream, Math.max(acked * 2, upstream.length));
        }
        latency.add(now - timestamps[acked]);
        downstream[acked++] = offset;
        bytes += recordBytes;
        valueBytes += recordValueBytes;
    }

    synchronized long upstreamAt(int index) {
        return index < sent ? upstream[index] : -1;
    }

    synchronized int ackedCount() {
        return acked;
    }

    synchronized boolean allAcked() {
        return acked == sent;
    }

    /** One past the last offset written or skipped; -1 before the first. */
    synchronized long seenNext() {
        return seenNext;
    }

    /**
     * The acknowledged records not reported yet, as one summary (null when there is nothing new). The
     * reported prefix is dropped, so a long-running task keeps only what is in flight.
     */
    synchronized Map<String, Object> report() {
        // Past the last acknowledged record only when nothing is in flight: skipped records that follow
        // an unacknowledged one must be read again if that one is lost.
        long next = acked == sent ? seenNext : (acked > 0 ? upstream[acked - 1] + 1 : reportedNext);
        if (acked == 0 && skipped == 0 && next <= reportedNext) {
            return null;
        }
        List<Long> syncUp = new ArrayList<>();
        List<Long> syncDown = new ArrayList<>();
        List<Boolean> runs = new ArrayList<>();
        syncPoints(syncUp, syncDown, runs);
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        out.put("topic", topic);
        out.put("partition", partition);
        out.put("records", (long) acked);
        out.put("skipped", skipped);
        out.put("dropped", dropped);
        out.put("failed", failed);
        out.put("bytes", bytes);
        out.put("next_upstream", next);
        out.put("sync_upstream", syncUp);
        out.put("sync_downstream", syncDown);
        out.put("sync_runs", runs);
        out.put("value_bytes", valueBytes);
        out.put("record_age_ms", age.take());
        out.put("replication_latency_ms", latency.take());
        // drop the reported prefix
        int rest = sent - acked;
        System.arraycopy(upstream, acked, upstream, 0, rest);
        System.arraycopy(timestamps, acked, timestamps, 0, rest);
        sent = rest;
        acked = 0;
        skipped = 0;
        dropped = 0;
        failed = 0;
        bytes = 0;
        valueBytes = 0;
        reportedNext = next;
        return out;
    }

    /**
     * The summary of a stretch written and acknowledged as given ({@code upstream}, {@code downstream}:
     * comma-separated offsets), as JSON: lets tests check this class against offsets/syncs.sync_points.
     */
    public static String summaryOf(String upstream, String downstream) throws Exception {
        PartitionLog log = new PartitionLog("t", 0, "A.t");
        for (String offset : upstream.split(",")) {
            if (!offset.isEmpty()) {
                log.sent(Long.parseLong(offset), 0L, 0L);
            }
        }
        for (String offset : downstream.split(",")) {
            if (!offset.isEmpty()) {
                log.acked(Long.parseLong(offset), 1, 1, 0L);
            }
        }
        return new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(log.report());
    }

    private void syncPoints(List<Long> up, List<Long> down, List<Boolean> runs) {
        int n = acked;
        if (n == 0) {
            return;
        }
        for (int i = 0; i < n; i++) {
            boolean breaksBefore = i > 0 && broken(i - 1);
            boolean breaksAfter = i < n - 1 && broken(i);
            if (i == 0 || i == n - 1 || breaksBefore || breaksAfter) {
                up.add(upstream[i]);
                down.add(downstream[i]);
                // Between this point and the next one nothing breaks: a run (the last point never is).
                runs.add(i < n - 1 && !breaksAfter);
            }
        }
    }

    private boolean broken(int i) {
        return upstream[i + 1] - upstream[i] != 1 || downstream[i + 1] - downstream[i] != 1;
    }

    /** Count, sum, min, max and last of millisecond values; {@link #take} hands them out and starts again. */
    private static final class Stats {
        private long count;
        private long sum;
        private long min = Long.MAX_VALUE;
        private long max = Long.MIN_VALUE;
        private long last;

        void add(long valueMs) {
            long v = Math.max(0L, valueMs);  // a source clock ahead of ours is not a negative age
            count++;
            sum += v;
            min = Math.min(min, v);
            max = Math.max(max, v);
            last = v;
        }

        /** [count, sum, min, max, last], or an empty list when nothing was added. */
        List<Long> take() {
            List<Long> out = count == 0 ? List.of() : List.of(count, sum, min, max, last);
            count = 0;
            sum = 0;
            min = Long.MAX_VALUE;
            max = Long.MIN_VALUE;
            return out;
        }
    }
}
