package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WriterSpecTest {
    /** As pipeline/flow.WriterSpec.to_json writes it in local mode, at least once. */
    static final String LOCAL = "{\"channel\": \"ch-1\", \"target\": \"B\", \"producer\": {\"bootstrap.servers\": "
        + "\"localhost:1\", \"linger.ms\": 5}, \"driver\": null, \"report_interval_ms\": 0, \"producer_slots\": 0, "
        + "\"source_admin\": null, \"source_topic_ids\": {}, \"remote_topics\": {\"t\": \"A.t\"}, \"exactly_once\": "
        + "null, \"transforms\": null, \"message_limits\": {\"A.t\": 1048588}, \"filtered\": false, "
        + "\"provenance\": null}";

    @Test
    void aLocalAtLeastOnceSpec() throws Exception {
        WriterSpec spec = new WriterSpec(LOCAL);
        assertEquals("ch-1", spec.channelId);
        assertEquals("B", spec.target);
        assertEquals(Map.of("bootstrap.servers", "localhost:1", "linger.ms", "5"), spec.producerConfig);
        assertEquals(1, spec.producerSlots);
        assertEquals(Map.of("A.t", 1_048_588), spec.messageLimits);
        assertEquals(0L, spec.reportIntervalMs);
        assertFalse(spec.filtered);
        assertNull(spec.driver);
        assertNull(spec.provenance);
        assertNull(spec.transforms);
        assertNull(spec.sourceAdmin);
        assertNull(spec.transactionalPrefix);
        assertTrue(spec.sourceTopicIds.isEmpty());
    }

    @Test
    void aClusterExactlyOnceSpec() throws Exception {
        WriterSpec spec = new WriterSpec("{\"channel\": \"ch-2\", \"target\": \"B\", \"producer\": {}, "
            + "\"driver\": {\"host\": \"10.0.0.1\", \"port\": 4040, \"token\": \"s\"}, \"report_interval_ms\": 250, "
            + "\"producer_slots\": 4, \"source_admin\": {\"bootstrap.servers\": \"a:9092\"}, \"source_topic_ids\": "
            + "{\"t\": \"id-1\"}, \"remote_topics\": {\"t\": \"A.t\"}, \"exactly_once\": "
            + "{\"transactional_id\": \"f-A-B\", "
            + "\"positions_group\": \"g\", \"admin\": {\"bootstrap.servers\": \"b:9092\"}}, \"filtered\": true, "
            + "\"provenance\": {\"source\": \"A\", \"target\": \"B\"}}");
        assertEquals(Map.of("host", "10.0.0.1", "port", 4040, "token", "s"), spec.driver);
        assertEquals(250L, spec.reportIntervalMs);
        assertEquals(4, spec.producerSlots);
        assertEquals(Map.of("t", "id-1"), spec.sourceTopicIds);
        assertEquals("f-A-B", spec.transactionalPrefix);
        assertEquals("g", spec.positionsGroup);
        assertEquals(Map.of("bootstrap.servers", "b:9092"), spec.targetAdmin);
        assertEquals(Map.of("source", "A", "target", "B"), spec.provenance);
        assertTrue(spec.filtered);
        assertTrue(spec.messageLimits.isEmpty());
    }

    @Test
    void aSourceTopicWithoutAPlannedRemoteTopicIsRefused() throws Exception {
        WriterSpec spec = new WriterSpec(LOCAL);
        assertEquals("A.t", spec.remoteTopic("t"));
        RecordPathException e = assertThrows(RecordPathException.class, () -> spec.remoteTopic("u"));
        assertEquals("no remote topic planned for source topic 'u'", e.getMessage());
    }

    @Test
    void theSpecTravelsToTheExecutorsWithTheWriter() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(new WriterSpec(LOCAL));
        }
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            WriterSpec copy = (WriterSpec) in.readObject();
            assertEquals("ch-1", copy.channelId);
            assertEquals(Map.of("t", "A.t"), copy.remoteTopics);
            assertEquals(Map.of("A.t", 1_048_588), copy.messageLimits);
        }
    }
}
