package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.filtered;
import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.record;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The writer's task in the driver's JVM (local mode) on records it does not send: dropped by the SQL filter, seen
 * by the target already, written by an earlier attempt, refused before sending. No broker: the producer is made
 * but given nothing.
 */
class MirrorWriterTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final String channelId = "test-" + UUID.randomUUID();
    private final FlowChannel channel = FlowChannel.create(channelId, 0);

    @AfterEach
    void release() {
        channel.release();
    }

    private Map<String, Object> spec() {
        Map<String, Object> spec = new HashMap<>();
        spec.put("channel", channelId);
        spec.put("target", "B");
        spec.put("producer", Map.of("bootstrap.servers", "localhost:1", "max.block.ms", "1000"));  // a send fails fast
        spec.put("producer_slots", 1);
        spec.put("remote_topics", Map.of("t", "A.t"));
        spec.put("filtered", true);
        spec.put("provenance", Map.of("source", "A", "target", "B"));
        return spec;
    }

    private static MirrorWriter writer(Map<String, Object> spec) throws Exception {
        return new MirrorWriter(JSON.writeValueAsString(spec));
    }

    private List<Map<String, Object>> reports() throws Exception {
        return JSON.readValue(channel.drain(0), new TypeReference<List<Map<String, Object>>>() { });
    }

    @Test
    void aTaskOfAQueryThatIsGoneWritesNothing() throws Exception {
        Map<String, Object> spec = spec();
        spec.put("channel", "gone");
        assertFalse(writer(spec).open(0, 0));
    }

    @Test
    void filteredAndAlreadySeenRecordsAreReportedAsSkipped() throws Exception {
        MirrorWriter writer = writer(spec());
        assertTrue(writer.open(0, 0));
        writer.process(filtered("t", 0, 0L, false));
        writer.process(filtered("t", 0, 1L, true, header(Provenance.HEADER, "B")));  // B saw it
        writer.process(filtered("t", 0, 2L, false));
        writer.close(null);
        List<Map<String, Object>> reports = reports();
        assertEquals(1, reports.size());
        Map<String, Object> summary = reports.get(0);
        assertEquals("t", summary.get("topic"));
        assertEquals(0, summary.get("records"));
        assertEquals(3, summary.get("skipped"));
        assertEquals(2, summary.get("dropped"));
        assertEquals(3, summary.get("next_upstream"));
    }

    @Test
    void aRetriedTaskStartsAfterWhatTheQueryReported() throws Exception {
        channel.reported("t", 0, 5L);
        MirrorWriter writer = writer(spec());
        writer.open(0, 1);
        writer.process(filtered("t", 0, 3L, true));
        writer.process(filtered("t", 0, 4L, true));
        writer.process(filtered("t", 0, 5L, false));
        writer.close(null);
        Map<String, Object> summary = reports().get(0);
        assertEquals(3, summary.get("skipped"));
        assertEquals(1, summary.get("dropped"));
        assertEquals(6, summary.get("next_upstream"));
    }

    @Test
    void aTopicWithoutARemoteTopicFailsTheTask() throws Exception {
        MirrorWriter writer = writer(spec());
        writer.open(0, 0);
        RecordPathException e = assertThrows(RecordPathException.class,
                                             () -> writer.process(filtered("u", 0, 0L, true)));
        assertEquals("no remote topic planned for source topic 'u'", e.getMessage());
        writer.close(e);
        assertEquals(List.of(), reports());
    }

    @Test
    void aRecordOverItsTopicsLimitFailsTheTaskAfterReportingWhatCameBefore() throws Exception {
        Map<String, Object> spec = spec();
        spec.put("message_limits", Map.of("A.t", 100));
        MirrorWriter writer = writer(spec);
        writer.open(0, 0);
        writer.process(filtered("t", 0, 0L, false));
        RecordPathException e = assertThrows(RecordPathException.class, () -> writer.process(RowFactory.create(
            "t", 0, 1L, 0L, null, new byte[200], Rows.headers(), true)));
        assertTrue(e.getMessage().startsWith("record t-0@1 is "), e.getMessage());
        assertTrue(e.getMessage().contains(" bytes, larger than cluster 'B' accepts in remote topic 'A.t' "
            + "(max.message.bytes = 100)."), e.getMessage());
        assertEquals(1, reports().get(0).get("next_upstream"));  // reported before the task failed
        writer.close(e);
    }

    @Test
    void aRecordTheProducerRefusesAtOnceFailsTheTaskNamingIt() throws Exception {
        MirrorWriter writer = writer(spec());
        writer.open(0, 0);
        writer.process(filtered("t", 0, 3L, false));
        writer.process(filtered("t", 0, 4L, true));  // no broker: no metadata within max.block.ms
        String why = "writing t-0@4 to cluster 'B' topic 'A.t' failed: Topic A.t not present in metadata after 1000 "
            + "ms. (TimeoutException). Cluster 'B' did not acknowledge in time: is it reachable?";
        assertEquals(why, writer.error);
        RecordPathException next = assertThrows(RecordPathException.class,
                                                 () -> writer.process(filtered("t", 0, 5L, false)));
        assertEquals(why, next.getMessage());
        RecordPathException end = assertThrows(RecordPathException.class, () -> writer.close(null));
        assertEquals(why, end.getMessage());
        Map<String, Object> summary = reports().get(0);  // the drop of 3 is counted, but 4 is read again with it
        assertEquals(1, summary.get("dropped"));
        assertEquals(0, summary.get("records"));
        assertEquals(-1, summary.get("next_upstream"));  // no position: control/positions.advance keeps its own
    }

    @Test
    void aStoppedQuerysWriterWritesNothingMore() throws Exception {
        MirrorWriter writer = writer(spec());
        writer.open(0, 0);
        assertEquals(0, channel.close(1_000));
        writer.process(record("t", 0, 0L, 0L, "k", "v"));  // not even looked at
        writer.close(null);
        assertEquals(List.of(), reports());
    }

    @Test
    void theWriterTravelsToTheExecutorsAndWorksThere() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(writer(spec()));
        }
        MirrorWriter copy;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            copy = (MirrorWriter) in.readObject();
        }
        assertTrue(copy.open(0, 0));
        copy.process(filtered("t", 0, 7L, false));
        copy.close(null);
        assertEquals(8, reports().get(0).get("next_upstream"));
    }
}
