package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class TaskPartitionsTest {
    /** A channel that keeps what it was offered. */
    static final class Kept extends ReportChannel {
        final List<List<Map<String, Object>>> offered = new ArrayList<>();

        @Override
        void offer(List<Map<String, Object>> summaries) {
            offered.add(summaries);
        }
    }

    private final TaskPartitions partitions = new TaskPartitions();
    private final List<String> made = new ArrayList<>();

    private TaskPartition of(String topic, int partition, long committedNext) {
        return partitions.of(topic, partition, (t, p) -> {
            made.add(t + "-" + p);
            return new TaskPartition(null, new PartitionLog(t, p, "A." + t), committedNext, -1L, Integer.MAX_VALUE);
        });
    }

    @Test
    void aPartitionIsMadeOnceThenFound() {
        TaskPartition first = of("t", 0, -1L);
        assertSame(first, of("t", 0, -1L));
        of("t", 1, -1L);
        of("u", 0, -1L);
        assertEquals(List.of("t-0", "t-1", "u-0"), made);
    }

    @Test
    void recordsNotAcknowledgedFailTheTaskNamingThePartition() {
        of("t", 0, -1L).log.sent(5, 0L, 0L);
        assertFalse(partitions.allAcknowledged());
        RecordPathException e = assertThrows(RecordPathException.class, () -> partitions.requireAcknowledged("B"));
        assertEquals("records of t-0 were not acknowledged by cluster 'B'; is it reachable?", e.getMessage());
        of("t", 0, -1L).log.acked(50, 1, 1, 0L);
        assertTrue(partitions.allAcknowledged());
        partitions.requireAcknowledged("B");
    }

    @Test
    void theNextPositionsArePerRemotePartitionWithTheSourceTopicsId() {
        of("t", 0, -1L).log.sent(9, 0L, 0L);
        of("u", 1, -1L).log.skipped(3);
        of("v", 2, 20L).log.skipped(19);  // below what is committed already
        Map<TopicPartition, OffsetAndMetadata> next = partitions.nextPositions(Map.of("t", "id-t"));
        assertEquals(Map.of(new TopicPartition("A.t", 0), new OffsetAndMetadata(10L, "id-t"),
                            new TopicPartition("A.u", 1), new OffsetAndMetadata(4L, "")), next);
    }

    @Test
    void aReportCarriesEveryPartitionWithSomethingNewOnce() {
        Kept channel = new Kept();
        TaskPartition t = of("t", 0, -1L);
        t.log.sent(4, 0L, 0L);
        t.log.acked(40, 1, 1, 0L);
        of("u", 0, -1L);  // nothing yet
        partitions.report(channel);
        assertEquals(1, channel.offered.size());
        assertEquals(List.of("t"), channel.offered.get(0).stream().map(s -> s.get("topic")).toList());
        assertEquals(5L, channel.reportedNext("t", 0));
        assertEquals(-1L, channel.reportedNext("u", 0));

        partitions.report(channel);  // nothing new: nothing offered
        assertEquals(1, channel.offered.size());
    }
}
