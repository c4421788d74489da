package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.junit.jupiter.api.Test;

class TaskPartitionTest {
    private final PartitionLog log = new PartitionLog("t", 0, "A.t");

    private static RecordMetadata acknowledged(long offset, int keyBytes, int valueBytes) {
        return new RecordMetadata(new TopicPartition("A.t", 0), offset, 0, 0L, keyBytes, valueBytes);
    }

    @Test
    void theTaskStartsPastWhatIsCommittedOrWasReported() {
        assertEquals(7L, new TaskPartition(null, log, 7L, 3L, 100).writtenNext);
        assertEquals(9L, new TaskPartition(null, log, -1L, 9L, 100).writtenNext);
        assertEquals(-1L, new TaskPartition(null, log, -1L, -1L, 100).writtenNext);
    }

    @Test
    void anAcknowledgementGoesToTheLog() {
        TaskPartition p = new TaskPartition(null, log, -1L, -1L, 100);
        log.sent(5, 0L, 0L);
        p.onCompletion(acknowledged(50, 3, 7), null);
        log.sent(6, 0L, 0L);
        p.onCompletion(acknowledged(51, -1, -1), null);  // a null key and value: no bytes
        Map<String, Object> report = log.report();
        assertEquals(List.of(5L, 6L), report.get("sync_upstream"));
        assertEquals(List.of(50L, 51L), report.get("sync_downstream"));
        assertEquals(10L, report.get("bytes"));
        assertEquals(7L, report.get("value_bytes"));
    }

    @Test
    void aRefusalFailsTheWritersTaskNamingTheOldestRecordInFlight() throws Exception {
        MirrorWriter writer = new MirrorWriter(WriterSpecTest.LOCAL);
        TaskPartition p = new TaskPartition(writer, log, -1L, -1L, 100);
        log.sent(5, 0L, 0L);
        log.sent(6, 0L, 0L);
        p.onCompletion(acknowledged(50, 1, 1), null);
        assertNull(writer.error);
        p.onCompletion(null, new TimeoutException("expired"));
        String first = "writing t-0@6 to cluster 'B' topic 'A.t' failed: expired (TimeoutException). Cluster 'B' "
            + "did not acknowledge in time: is it reachable?";
        assertEquals(first, writer.error);
        p.onCompletion(null, new TimeoutException("later"));
        assertEquals(first, writer.error);  // the first failure is the one the task fails with
    }
}
