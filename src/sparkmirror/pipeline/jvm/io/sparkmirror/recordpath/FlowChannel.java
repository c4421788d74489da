package io.sparkmirror.recordpath;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What one running query of a flow reports to the driver: the summaries of acknowledged records, and the
 * gate that stops its writers between records so the query can be stopped without losing or repeating any.
 *
 * <p>Channels live in the JVM that runs both the driver and the executors (Spark's local mode); the Python
 * driver drains them through py4j. Each query generation has its own channel id, so a late writer of a
 * stopped query can never report into its successor.
 */
public final class FlowChannel {
    private static final ConcurrentHashMap<String, FlowChannel> CHANNELS = new ConcurrentHashMap<>();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ScheduledExecutorService REPORTER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sparkmirror-reporter");
        t.setDaemon(true);
        return t;
    });

    private final String id;
    private final Set<MirrorWriter> open = ConcurrentHashMap.newKeySet();
    private final LinkedBlockingQueue<Map<String, Object>> reports = new LinkedBlockingQueue<>();
    private volatile boolean closed;
    private final ScheduledFuture<?> reporting;

    private FlowChannel(String id, long reportIntervalMs) {
        this.id = id;
        this.reporting = reportIntervalMs <= 0 ? null : REPORTER.scheduleWithFixedDelay(
            this::reportOpenWriters, reportIntervalMs, reportIntervalMs, TimeUnit.MILLISECONDS);
    }

    /** Create the channel of a new query generation (called by the driver before the query starts). */
    public static FlowChannel create(String id, long reportIntervalMs) {
        FlowChannel channel = new FlowChannel(id, reportIntervalMs);
        FlowChannel old = CHANNELS.put(id, channel);
        if (old != null) {
            old.release();
        }
        return channel;
    }

    /** The channel of a writer's query; null when the driver has dropped it (the query is being stopped). */
    static FlowChannel lookup(String id) {
        return CHANNELS.get(id);
    }

    boolean isClosed() {
        return closed;
    }

    void opened(MirrorWriter writer) {
        open.add(writer);
        if (closed) {  // closed between the check and the registration: the closer may have missed it
            writer.stopWriting();
        }
    }

    void closed(MirrorWriter writer) {
        open.remove(writer);
    }

    void offer(List<Map<String, Object>> summaries) {
        reports.addAll(summaries);
    }

    private void reportOpenWriters() {
        for (MirrorWriter writer : open) {
            writer.reportAcknowledged();
        }
    }

    /**
     * Summaries reported since the last call, as a JSON array; waits up to {@code timeoutMs} for the first.
     */
    public String drain(long timeoutMs) throws Exception {
        List<Map<String, Object>> out = new ArrayList<>();
        Map<String, Object> first = reports.poll(timeoutMs, TimeUnit.MILLISECONDS);
        if (first != null) {
            out.add(first);
            reports.drainTo(out);
        }
        return JSON.writeValueAsString(out);
    }

    /**
     * Stop every writer of this query between two records: wait until what each has sent is acknowledged
     * (or {@code timeoutMs} passes), report it, and make later records and tasks write nothing. Their
     * positions do not move, so the next query reads them again. Returns the writers still busy.
     */
    public int close(long timeoutMs) {
        closed = true;
        long deadline = System.currentTimeMillis() + timeoutMs;
        for (MirrorWriter writer : open) {
            writer.stopWriting();
        }
        for (MirrorWriter writer : open) {
            writer.awaitAcknowledged(Math.max(0, deadline - System.currentTimeMillis()));
            writer.reportAcknowledged();
        }
        int busy = 0;
        for (MirrorWriter writer : open) {
            busy += writer.allAcknowledged() ? 0 : 1;
        }
        return busy;
    }

    /** Forget the channel (after the query stopped and its last summaries were drained). */
    public void release() {
        closed = true;
        if (reporting != null) {
            reporting.cancel(false);
        }
        CHANNELS.remove(id, this);
    }
}
