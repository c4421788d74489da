package io.sparkmirror.recordpath;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A query's permission to write, valid until its driver stops renewing it: while it is expired the query's
 * writers send no record (another process may have taken the flow over). Without a lease ({@link #NONE}) it never
 * expires.
 *
 * <p>Deadlines are this JVM's {@code System.nanoTime()}: monotonic, counting on through a pause of the process
 * (SIGSTOP, a long GC), so a lease is expired when the process resumes after a pause longer than the lease. Another
 * JVM is told a renewal as a duration and computes its own deadline on receipt. Checking costs one volatile read
 * and one {@code nanoTime()}, cheap enough for every record.
 */
final class Lease {
    static final Lease NONE = new Lease(false, 0);
    static final long POLL_MS = 25;  // how often a writer waiting on an expired lease looks again

    private final boolean held;
    private volatile long validUntil;  // System.nanoTime() at which it expires

    private Lease(boolean held, long validMs) {
        this.held = held;
        this.validUntil = held ? deadline(validMs) : 0;
    }

    /** A lease valid for {@code validMs} from now (0 or less: expired already). */
    static Lease validFor(long validMs) {
        return new Lease(true, validMs);
    }

    /** {@code leaseMs} > 0: a lease valid that long from now; else none. */
    static Lease of(long leaseMs) {
        return leaseMs > 0 ? validFor(leaseMs) : NONE;
    }

    boolean held() {
        return held;
    }

    /** Valid for {@code validMs} from now (a shorter renewal shortens it); nothing without a lease. */
    void renew(long validMs) {
        if (held) {
            validUntil = deadline(validMs);
        }
    }

    boolean expired() {
        return held && System.nanoTime() - validUntil >= 0;
    }

    /**
     * With {@code monitor}'s lock held: wait on it (the lock released meanwhile, so a stop can get it) until this
     * lease is valid, true, or {@code ended} says to give up, false; false too when interrupted (the interrupt kept).
     */
    boolean await(Object monitor, BooleanSupplier ended) {
        while (expired()) {
            if (ended.getAsBoolean()) {
                return false;
            }
            try {
                monitor.wait(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Whole milliseconds left (rounded down, 0 when expired): what another JVM is told at connection. */
    long remainingMs() {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(validUntil - System.nanoTime()));
    }

    private static long deadline(long validMs) {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, validMs));
    }
}
