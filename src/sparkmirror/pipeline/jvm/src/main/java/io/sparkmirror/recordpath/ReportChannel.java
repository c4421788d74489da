package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a writer reports acknowledged records and learns that its query is stopping: the driver's
 * {@link FlowChannel} itself when the writer runs in the driver's JVM (Spark's local mode), a
 * {@link RemoteChannel} connected to it when the writer runs on an executor of a cluster. Both keep the
 * writers open in this JVM, which a stop acts on, and the query's {@link Lease}, without which they send nothing.
 */
abstract class ReportChannel {
    protected final Set<MirrorWriter> open = ConcurrentHashMap.newKeySet();
    protected volatile boolean closed;
    protected final Lease lease;
    // Per source partition ("topic\0partition"): one past the last offset a writer of this query in this JVM has
    // reported (acknowledged, or skipped). A retried task starts there instead of writing those records again.
    private final ConcurrentHashMap<String, Long> reportedNext = new ConcurrentHashMap<>();

    protected ReportChannel() {
        this(Lease.NONE);
    }

    protected ReportChannel(Lease lease) {
        this.lease = lease;
    }

    /** Remember what a report carried, before it is offered. */
    void reported(String topic, int partition, long nextUpstream) {
        reportedNext.merge(topic + "\u0000" + partition, nextUpstream, Math::max);
    }

    /** One past the last offset of the partition reported in this JVM by this query, or -1. */
    long reportedNext(String topic, int partition) {
        return reportedNext.getOrDefault(topic + "\u0000" + partition, -1L);
    }

    /** Whether the query is stopping: a writer opened now writes nothing. */
    boolean isClosed() {
        return closed;
    }

    /** Whether the query's lease has expired: its writers send nothing until it is renewed or they stop. */
    boolean leaseExpired() {
        return lease.expired();
    }

    /** A writer of this query started a task. */
    void opened(MirrorWriter writer) {
        open.add(writer);
        if (closed) {  // closed between the check and the registration: the closer may have missed it
            writer.stopWriting();
        }
    }

    /** A writer of this query ended its task. */
    void closed(MirrorWriter writer) {
        open.remove(writer);
    }

    /** Summaries of acknowledged records, in order; throws when they cannot reach the driver. */
    abstract void offer(List<Map<String, Object>> summaries);

    /**
     * The channel a writer of query generation {@code id} reports to: the driver's own when it is in this JVM,
     * else one connected to {@code driver} (host, port, token; null in local mode). Null when the query is
     * being stopped (or, without a driver endpoint, is gone).
     */
    static ReportChannel forWriter(String id, Map<String, Object> driver, long reportIntervalMs) {
        FlowChannel local = FlowChannel.lookup(id);
        if (local != null || driver == null) {
            return local;
        }
        return RemoteChannel.connect(id, (String) driver.get("host"), ((Number) driver.get("port")).intValue(),
                                     (String) driver.get("token"), reportIntervalMs);
    }
}
