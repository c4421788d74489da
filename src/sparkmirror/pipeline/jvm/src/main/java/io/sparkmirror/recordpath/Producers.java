package io.sparkmirror.recordpath;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Producers per JVM, one per distinct configuration and writer slot, kept across tasks and micro-batches.
 *
 * <p>A slot is a task's partition id modulo the flow's tasks.max, so concurrent tasks rarely share a
 * producer (as each MM2 task has its own): a task's flush then waits for its own records only, and each
 * sender thread scans only the partitions its tasks wrote (the producer's ready check walks every partition
 * it ever wrote to, on every send loop, which dominated the CPU profile at 1,000 partitions with one producer).
 */
final class Producers {
    private static final ConcurrentHashMap<List<Object>, KafkaProducer<byte[], byte[]>> CACHE =
        new ConcurrentHashMap<>();

    private Producers() {
    }

    static KafkaProducer<byte[], byte[]> get(Map<String, String> config, int slot) {
        return CACHE.computeIfAbsent(List.of(config, slot), key -> create(config));
    }

    /** Drop a producer after a failure, so a retried task starts from a fresh one (and a fresh epoch). */
    static void discard(Map<String, String> config, int slot, KafkaProducer<byte[], byte[]> producer) {
        if (CACHE.remove(List.of(config, slot), producer)) {
            try {
                producer.close(java.time.Duration.ZERO);
            } catch (RuntimeException ignored) {
                // already failed; nothing more to release
            }
        }
    }

    static KafkaProducer<byte[], byte[]> create(Map<String, String> config) {
        Map<String, Object> props = new HashMap<>(config);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return new KafkaProducer<>(props);
    }
}
