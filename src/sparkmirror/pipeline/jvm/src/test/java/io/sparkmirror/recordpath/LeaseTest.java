package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class LeaseTest {
    static final long DONE_MS = 10_000;  // ample for what should take milliseconds
    static final long WAITING_MS = 300;  // how long a waiter is watched still waiting

    /** Poll {@code condition} until it holds or {@code timeoutMs} passes; whether it held. */
    static boolean eventually(java.util.function.BooleanSupplier condition, long timeoutMs) throws Exception {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /** Whether {@code thread} is inside {@link Lease#await} (a writer waiting for its lease). */
    static boolean waitsForLease(Thread thread) {
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getClassName().equals(Lease.class.getName()) && frame.getMethodName().equals("await")) {
                return true;
            }
        }
        return false;
    }

    @Test
    void withoutALeaseNothingExpires() {
        assertSame(Lease.NONE, Lease.of(0));
        Lease.NONE.renew(0);
        assertFalse(Lease.NONE.expired());
        assertFalse(Lease.NONE.held());
    }

    @Test
    void aLeaseExpiresAfterItsLengthAndARenewalSetsANewOne() throws Exception {
        long start = System.nanoTime();
        Lease lease = Lease.of(200);
        assertTrue(lease.held());
        assertFalse(lease.expired());
        assertTrue(lease.remainingMs() > 0 && lease.remainingMs() <= 200, "left: " + lease.remainingMs());
        assertTrue(eventually(lease::expired, DONE_MS));
        assertTrue(System.nanoTime() - start >= 200_000_000L, "expired before its length");
        assertTrue(lease.remainingMs() == 0);
        lease.renew(60_000);
        assertFalse(lease.expired());
        assertTrue(lease.remainingMs() > 59_000);
        lease.renew(0);  // shorter: the driver's word is the last one
        assertTrue(lease.expired());
        assertTrue(Lease.validFor(0).expired());
    }

    @Test
    void awaitPollsWithoutSpinningAndReturnsOnceRenewed() throws Exception {
        Lease lease = Lease.validFor(0);
        Object monitor = new Object();
        AtomicInteger looks = new AtomicInteger();
        AtomicReference<Boolean> renewed = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            synchronized (monitor) {
                renewed.set(lease.await(monitor, () -> looks.incrementAndGet() < 0));
            }
        });
        waiter.start();
        waiter.join(WAITING_MS);
        assertTrue(waiter.isAlive());
        synchronized (monitor) {  // released while waiting
            assertTrue(looks.get() <= WAITING_MS / Lease.POLL_MS + 2, "looked " + looks.get() + " times: a spin");
        }
        lease.renew(60_000);
        waiter.join(DONE_MS);
        assertFalse(waiter.isAlive());
        assertTrue(renewed.get());
    }

    @Test
    void awaitGivesUpWhenToldOrInterrupted() throws Exception {
        Lease lease = Lease.validFor(0);
        Object monitor = new Object();
        AtomicBoolean ended = new AtomicBoolean();
        AtomicReference<Boolean> told = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            synchronized (monitor) {
                told.set(lease.await(monitor, ended::get));
            }
        });
        waiter.start();
        ended.set(true);
        waiter.join(DONE_MS);
        assertFalse(told.get());

        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        Thread killed = new Thread(() -> {
            synchronized (monitor) {
                interrupted.set(lease.await(monitor, () -> false) || !Thread.currentThread().isInterrupted());
            }
        });
        killed.start();
        killed.join(WAITING_MS / 3);
        killed.interrupt();
        killed.join(DONE_MS);
        assertFalse(interrupted.get(), "false, with the interrupt kept");
    }
}
