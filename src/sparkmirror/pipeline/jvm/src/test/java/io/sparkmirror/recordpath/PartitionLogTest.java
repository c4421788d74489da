package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PartitionLogTest {
    /** model.PartitionSummary's fields: the driver refuses a report with any other set. */
    private static final List<String> FIELDS = List.of("topic", "partition", "records", "skipped", "dropped", "failed",
        "bytes", "next_upstream", "sync_upstream", "sync_downstream", "sync_runs", "value_bytes", "record_age_ms",
        "replication_latency_ms");

    private final PartitionLog log = new PartitionLog("t", 3, "A.t");

    private void write(long[] upstream, long[] downstream) {
        for (long offset : upstream) {
            log.sent(offset, 0L, 0L);
        }
        for (long offset : downstream) {
            log.acked(offset, 1, 1, 0L);
        }
    }

    @Test
    void aReportHasThePartitionSummaryFields() {
        write(new long[] {5}, new long[] {9});
        Map<String, Object> report = log.report();
        assertEquals(FIELDS, new ArrayList<>(report.keySet()));
        assertEquals("t", report.get("topic"));
        assertEquals(3, report.get("partition"));
    }

    @Test
    void syncPointsAreTheEndsAndBothRecordsAroundEveryBreak() {
        // upstream jumps 12 -> 15; downstream stays contiguous
        write(new long[] {10, 11, 12, 15, 16}, new long[] {100, 101, 102, 103, 104});
        Map<String, Object> report = log.report();
        assertEquals(List.of(10L, 12L, 15L, 16L), report.get("sync_upstream"));
        assertEquals(List.of(100L, 102L, 103L, 104L), report.get("sync_downstream"));
        assertEquals(List.of(true, false, true, false), report.get("sync_runs"));
        assertEquals(5L, report.get("records"));
        assertEquals(17L, report.get("next_upstream"));
    }

    @Test
    void aBreakDownstreamIsASyncPointToo() {
        write(new long[] {0, 1, 2}, new long[] {50, 52, 53});
        Map<String, Object> report = log.report();
        assertEquals(List.of(0L, 1L, 2L), report.get("sync_upstream"));
        assertEquals(List.of(50L, 52L, 53L), report.get("sync_downstream"));
        assertEquals(List.of(false, true, false), report.get("sync_runs"));
    }

    @Test
    void onlyTheAcknowledgedPrefixIsReportedAndTheRestLater() {
        write(new long[] {7, 8, 9}, new long[] {70});
        Map<String, Object> first = log.report();
        assertEquals(1L, first.get("records"));
        assertEquals(8L, first.get("next_upstream"));
        assertFalse(log.allAcked());
        assertEquals(8L, log.upstreamAt(log.ackedCount()));

        log.acked(71, 1, 1, 0L);
        log.acked(72, 1, 1, 0L);
        Map<String, Object> second = log.report();
        assertEquals(2L, second.get("records"));
        assertEquals(List.of(8L, 9L), second.get("sync_upstream"));
        assertEquals(10L, second.get("next_upstream"));
        assertTrue(log.allAcked());
        assertNull(log.report());
    }

    @Test
    void skippedDroppedAndFailedRecordsAreCountedAndMoveThePosition() {
        log.skipped(0);             // on the target already
        log.dropped();              // a filter or transform dropped 1
        log.skipped(1);
        log.failed(2);              // a transform failed, errors.tolerance = all
        Map<String, Object> report = log.report();
        assertEquals(0L, report.get("records"));
        assertEquals(3L, report.get("skipped"));
        assertEquals(1L, report.get("dropped"));
        assertEquals(1L, report.get("failed"));
        assertEquals(3L, report.get("next_upstream"));
        assertEquals(List.of(), report.get("sync_upstream"));
        assertEquals(3L, log.seenNext());

        log.skipped(3);  // the counts start again after a report
        Map<String, Object> next = log.report();
        assertEquals(1L, next.get("skipped"));
        assertEquals(0L, next.get("dropped"));
        assertEquals(0L, next.get("failed"));
    }

    @Test
    void skippedRecordsAfterOneInFlightDoNotMoveThePositionPastIt() {
        log.sent(4, 0L, 0L);
        log.skipped(5);
        log.acked(40, 1, 1, 0L);
        log.sent(6, 0L, 0L);
        log.skipped(7);
        Map<String, Object> report = log.report();
        assertEquals(5L, report.get("next_upstream"));  // 6 may be lost: 7 is read again with it
        log.acked(41, 1, 1, 0L);
        assertEquals(8L, log.report().get("next_upstream"));
    }

    @Test
    void bytesAgeAndLatencyCoverTheRecordsSinceTheLastReport() {
        log.sent(0, 1_000L, 1_500L);
        log.sent(1, 2_000L, 2_100L);
        log.acked(10, 30, 20, 1_700L);
        log.acked(11, 5, 5, 2_400L);
        Map<String, Object> report = log.report();
        assertEquals(35L, report.get("bytes"));
        assertEquals(25L, report.get("value_bytes"));
        assertEquals(List.of(2L, 600L, 100L, 500L, 100L), report.get("record_age_ms"));
        assertEquals(List.of(2L, 1_100L, 400L, 700L, 400L), report.get("replication_latency_ms"));

        log.skipped(2);
        Map<String, Object> next = log.report();
        assertEquals(0L, next.get("bytes"));
        assertEquals(List.of(), next.get("record_age_ms"));
        assertEquals(List.of(), next.get("replication_latency_ms"));
    }

    @Test
    void aSourceClockAheadOfOursIsNoNegativeAge() {
        log.sent(0, 5_000L, 1_000L);
        log.acked(0, 1, 1, 2_000L);
        Map<String, Object> report = log.report();
        assertEquals(List.of(1L, 0L, 0L, 0L, 0L), report.get("record_age_ms"));
        assertEquals(List.of(1L, 0L, 0L, 0L, 0L), report.get("replication_latency_ms"));
    }

    @Test
    void aLongTaskKeepsOnlyWhatIsInFlight() {
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 100; i++) {
                long offset = round * 100L + i;
                log.sent(offset, 0L, 0L);
                log.acked(1_000 + offset, 1, 1, 0L);
            }
            Map<String, Object> report = log.report();
            assertEquals(100L, report.get("records"));
            assertEquals(List.of(round * 100L, round * 100L + 99), report.get("sync_upstream"));
        }
    }

    @Test
    void summaryOfIsTheReportAsJson() throws Exception {
        Map<?, ?> summary = new ObjectMapper().readValue(PartitionLog.summaryOf("1,2,4", "7,8,9"), Map.class);
        assertEquals(FIELDS, new ArrayList<>(summary.keySet()));
        assertEquals(List.of(1, 2, 4), summary.get("sync_upstream"));
        assertEquals(List.of(7, 8, 9), summary.get("sync_downstream"));
        assertEquals(5, summary.get("next_upstream"));
        assertEquals(3, summary.get("bytes"));
    }
}
