package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/** The flow source's consumer pool; no broker: a consumer connects only when it polls. */
class SourceConsumersTest {
    private static Map<String, Object> settings(String name) {
        return Map.of("bootstrap.servers", "127.0.0.1:1", "client.id", name);
    }

    @Test
    void aReleasedConsumerIsTakenAgainWithItsPartitionsResumed() {
        Map<String, Object> config = settings("pool-again");
        KafkaConsumer<byte[], byte[]> first = SourceConsumers.acquire(config);
        TopicPartition tp = new TopicPartition("t", 0);
        first.assign(List.of(tp));
        first.pause(List.of(tp));
        SourceConsumers.release(first);
        KafkaConsumer<byte[], byte[]> again = SourceConsumers.acquire(config);
        assertSame(first, again);
        assertEquals(0, again.paused().size());
        KafkaConsumer<byte[], byte[]> second = SourceConsumers.acquire(config);
        assertNotSame(again, second);  // lent out: a second task gets its own
        SourceConsumers.release(again);
        SourceConsumers.release(second);
        SourceConsumers.closeAll(config);
    }

    @Test
    void oncePolledOrStoppedAConsumerIsClosedNotKept() {
        Map<String, Object> config = settings("pool-stopped");
        KafkaConsumer<byte[], byte[]> held = SourceConsumers.acquire(config);
        SourceConsumers.closeAll(config);  // the query stopped while a task still held it
        SourceConsumers.release(held);
        assertThrows(IllegalStateException.class, held::paused);  // closed
        KafkaConsumer<byte[], byte[]> broken = SourceConsumers.acquire(config);
        SourceConsumers.discard(broken);
        assertThrows(IllegalStateException.class, broken::paused);
        KafkaConsumer<byte[], byte[]> fresh = SourceConsumers.acquire(config);
        assertNotSame(broken, fresh);
        SourceConsumers.discard(fresh);
    }

    @Test
    void theSourceForcesByteArraysNoGroupNoCommitsAndNoReset() {
        Map<String, Object> forced = SourceConsumers.settings(Map.of("group.id", "g", "auto.offset.reset", "earliest",
                                                                      "enable.auto.commit", "true"));
        assertEquals("none", forced.get("auto.offset.reset"));
        assertEquals("false", forced.get("enable.auto.commit"));
        assertEquals(null, forced.get("group.id"));
    }
}
