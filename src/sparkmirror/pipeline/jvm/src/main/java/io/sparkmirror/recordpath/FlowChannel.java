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
 * <p>Channels live in the driver's JVM; the Python driver drains them through py4j. Writers in the same JVM
 * (Spark's local mode) use the channel itself; writers on a cluster's executors reach it through the
 * driver's {@link ChannelServer}, one connection per executor JVM. Each query generation has its own channel
 * id, so a late writer of a stopped query can never report into its successor.
 *
 * <p>With a lease, the channel also fences its writers: the driver renews it while it owns the flow, and while it
 * is expired no writer of the query sends a record (they wait for a renewal or a stop). Each renewal is forwarded
 * to the executors' channels as a duration, which time it with their own clocks.
 */
public final class FlowChannel extends ReportChannel {
    private static final ConcurrentHashMap<String, FlowChannel> CHANNELS = new ConcurrentHashMap<>();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ScheduledExecutorService REPORTER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sparkmirror-reporter");
        t.setDaemon(true);
        return t;
    });

    private final String id;
    private final Set<ChannelServer.Connection> remote = ConcurrentHashMap.newKeySet();
    private final LinkedBlockingQueue<Map<String, Object>> reports = new LinkedBlockingQueue<>();
    private final ScheduledFuture<?> reporting;

    private FlowChannel(String id, long reportIntervalMs, long leaseMs) {
        super(Lease.of(leaseMs));
        this.id = id;
        this.reporting = reportIntervalMs <= 0 ? null : REPORTER.scheduleWithFixedDelay(
            this::reportOpenWriters, reportIntervalMs, reportIntervalMs, TimeUnit.MILLISECONDS);
    }

    /** Create the channel of a new query generation (called by the driver before the query starts), without a
     * lease: its writers write until the query is stopped. */
    public static FlowChannel create(String id, long reportIntervalMs) {
        return create(id, reportIntervalMs, 0);
    }

    /**
     * As {@link #create(String, long)}; with {@code leaseMs} > 0 the query's writers hold a lease, valid for
     * {@code leaseMs} from now, that the driver must {@link #renew} before it expires.
     */
    public static FlowChannel create(String id, long reportIntervalMs, long leaseMs) {
        FlowChannel channel = new FlowChannel(id, reportIntervalMs, leaseMs);
        FlowChannel old = CHANNELS.put(id, channel);
        if (old != null) {
            old.release();
        }
        return channel;
    }

    /**
     * The endpoint (JSON: host, port, token) that writers on a cluster's executors report to; the server
     * listens on {@code bindHost} and executors are told {@code advertisedHost} (spark.driver.host).
     */
    public static String endpoint(String bindHost, String advertisedHost) throws Exception {
        return JSON.writeValueAsString(ChannelServer.endpoint(bindHost, advertisedHost));
    }

    /** The channel of a writer's query; null when the driver has dropped it (the query is being stopped). */
    static FlowChannel lookup(String id) {
        return CHANNELS.get(id);
    }

    /** An executor's connection joins; its caller then checks {@link #isClosed} (the closer may have missed it). */
    void attach(ChannelServer.Connection connection) {
        remote.add(connection);
    }

    /** What an executor is told when it connects: open, and with a lease the milliseconds it has left. */
    Map<String, Object> opening() {
        return lease.held() ? Map.of("open", true, "lease_ms", lease.remainingMs()) : Map.of("open", true);
    }

    /**
     * The driver still owns the flow: the writers may write for {@code validMs} from now (here, and on each
     * executor from when it gets this). Nothing without a lease.
     */
    public void renew(long validMs) {
        if (!lease.held()) {
            return;
        }
        lease.renew(validMs);
        for (ChannelServer.Connection connection : remote) {
            connection.renew(validMs);
        }
    }

    /** Whether the lease has expired (never without one). */
    @Override
    public boolean leaseExpired() {
        return super.leaseExpired();
    }

    void detach(ChannelServer.Connection connection) {
        remote.remove(connection);
    }

    @Override
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
        List<ChannelServer.Connection> told = new ArrayList<>();
        for (ChannelServer.Connection connection : remote) {  // executors stop theirs meanwhile
            if (connection.stop(timeoutMs)) {
                told.add(connection);
            }
        }
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
        for (ChannelServer.Connection connection : told) {  // their reports arrive before their answer
            busy += connection.awaitStopped(Math.max(0, deadline - System.currentTimeMillis()) + 1000);
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
        for (ChannelServer.Connection connection : remote) {
            connection.close();
        }
    }
}
