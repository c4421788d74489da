package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class FetchPaceTest {
    /** {@code n} polls spread over one window from {@code start}, of which {@code withRecords} returned records. */
    private static boolean window(FetchPace pace, long start, int n, int withRecords) {
        boolean batched = pace.batched();
        for (int i = 1; i <= n; i++) {
            batched = pace.afterPoll(start + i * FetchPace.WINDOW_MS / n, i <= withRecords);
        }
        return batched;
    }

    @Test
    void plainUntilMorePollsThanTheBoundReturnRecordsInASecondThenBatchedUntilFewerThanHalf() {
        FetchPace pace = new FetchPace(200, 0);
        long before = FetchPace.switches();
        assertFalse(window(pace, 0, 400, 200), "200 a second is not above 200");
        assertTrue(window(pace, 1_000, 400, 201));
        assertTrue(window(pace, 2_000, 200, 100), "half the bound keeps it batched");
        assertFalse(window(pace, 3_000, 200, 99));
        assertEquals(before + 2, FetchPace.switches());
    }

    @Test
    void decidesOncePerWindowAndCountsByTheTimeAWindowTook() {
        FetchPace pace = new FetchPace(2, 0);
        assertFalse(pace.afterPoll(10, true));
        assertFalse(pace.afterPoll(20, true));
        assertFalse(pace.afterPoll(30, true), "three in 30 ms: not decided before the window ends");
        assertFalse(pace.afterPoll(3_000, true), "four polls with records in 3 s: 1.3 a second");
        assertTrue(window(pace, 3_000, 10, 3));
        assertTrue(pace.afterPoll(4_400, true), "undecided inside a window");
        assertFalse(pace.afterPoll(6_000, false), "one in 2 s: below half of 2 a second");
    }
}
