package io.sparkmirror.recordpath;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Real-Time Mode's choice, per task, between plain fetches (the broker answers as soon as a record is there, and waits
 * up to 500 ms when none is) and batched ones (it gathers records for up to a few milliseconds first).
 *
 * <p>Under load the consumer of plain fetches asks again as soon as it is answered: hundreds of fetches a second, each
 * with a few records, and as many produce requests behind them. Batched fetches halve that CPU for a few milliseconds
 * of latency, but an idle consumer of them would ask every few milliseconds for nothing. So a task fetches plainly
 * until more than {@code batchAbove} polls in a second returned records, then batched until fewer than half that
 * many did (the halving keeps a flow at the edge from switching every second).
 */
public final class FetchPace {
    static final long WINDOW_MS = 1_000L;
    private static final AtomicLong SWITCHES = new AtomicLong();

    private final int batchAbove;
    private boolean batched;
    private long windowStart;
    private int withRecords;

    FetchPace(int batchAbove, long now) {
        this.batchAbove = batchAbove;
        this.windowStart = now;
    }

    /** Notes a poll's outcome; whether the next poll is to be batched. */
    boolean afterPoll(long now, boolean gotRecords) {
        if (gotRecords) {
            withRecords++;
        }
        long elapsed = now - windowStart;
        if (elapsed >= WINDOW_MS) {
            double perSecond = withRecords * 1000.0 / elapsed;
            boolean next = batched ? perSecond * 2 >= batchAbove : perSecond > batchAbove;
            if (next != batched) {
                batched = next;
                SWITCHES.incrementAndGet();
            }
            windowStart = now;
            withRecords = 0;
        }
        return batched;
    }

    boolean batched() {
        return batched;
    }

    /** How often tasks of this JVM switched between plain and batched fetches (tests read it through py4j). */
    public static long switches() {
        return SWITCHES.get();
    }
}
