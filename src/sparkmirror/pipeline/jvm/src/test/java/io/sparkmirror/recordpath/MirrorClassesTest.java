package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.mirror.DefaultTopicFilter;
import org.apache.kafka.connect.mirror.ReplicationPolicy;
import org.apache.kafka.connect.mirror.TopicFilter;
import org.junit.jupiter.api.Test;

class MirrorClassesTest {
    private static final String POLICY = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";

    @Test
    void aPolicyIsConfiguredWithTheFlowsConfigAsMm2ConfiguresIt() {
        ReplicationPolicy policy = (ReplicationPolicy) MirrorClasses.instance(
            POLICY, "ReplicationPolicy", Map.of("replication.policy.separator", "_"), List.of());
        assertEquals("A_orders", policy.formatRemoteTopic("A", "orders"));
        assertEquals("A", policy.topicSource("A_orders"));
    }

    @Test
    void oneInstancePerClassAndConfig() {
        Object one = MirrorClasses.instance(POLICY, "ReplicationPolicy", Map.of("a", "1"), List.of());
        assertSame(one, MirrorClasses.instance(POLICY, "ReplicationPolicy", Map.of("a", "1"), List.of()));
        assertNotSame(one, MirrorClasses.instance(POLICY, "ReplicationPolicy", Map.of("a", "2"), List.of()));
    }

    @Test
    void aFilterDecidesWithItsOwnConfig() {
        TopicFilter filter = (TopicFilter) MirrorClasses.instance(
            DefaultTopicFilter.class.getName(), "TopicFilter", Map.of("topics", "orders.*"), List.of());
        assertTrue(filter.shouldReplicateTopic("orders-eu"));
        assertFalse(filter.shouldReplicateTopic("payments"));
    }

    @Test
    void aClassOfAnotherInterfaceIsRefused() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> MirrorClasses.instance(POLICY, "TopicFilter", Map.of(), List.of()));
        assertEquals("class '" + POLICY + "' is not a TopicFilter", e.getMessage());
    }

    @Test
    void aSimpleNameIsRefused() {
        RecordPathException e = assertThrows(RecordPathException.class,
            () -> MirrorClasses.instance("DefaultReplicationPolicy", "ReplicationPolicy", Map.of(), List.of()));
        assertEquals("class 'DefaultReplicationPolicy' must be given by its full name", e.getMessage());
    }
}
