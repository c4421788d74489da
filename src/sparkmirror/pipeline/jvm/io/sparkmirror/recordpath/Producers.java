package io.sparkmirror.recordpath;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/** One producer per distinct configuration per JVM, shared by every task that writes with it. */
final class Producers {
    private static final ConcurrentHashMap<Map<String, String>, KafkaProducer<byte[], byte[]>> CACHE =
        new ConcurrentHashMap<>();

    private Producers() {
    }

    static KafkaProducer<byte[], byte[]> get(Map<String, String> config) {
        return CACHE.computeIfAbsent(config, Producers::create);
    }

    /** Drop a producer after a failure, so a retried task starts from a fresh one (and a fresh epoch). */
    static void discard(Map<String, String> config, KafkaProducer<byte[], byte[]> producer) {
        if (CACHE.remove(config, producer)) {
            try {
                producer.close(java.time.Duration.ZERO);
            } catch (RuntimeException ignored) {
                // already failed; nothing more to release
            }
        }
    }

    private static KafkaProducer<byte[], byte[]> create(Map<String, String> config) {
        Map<String, Object> props = new HashMap<>(config);
        props.put("key.serializer", ByteArraySerializer.class.getName());
        props.put("value.serializer", ByteArraySerializer.class.getName());
        return new KafkaProducer<>(props);
    }
}
