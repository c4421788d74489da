package io.sparkmirror.recordpath;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The flow source's consumers, kept in the JVM between micro-batches: a new consumer per task and batch would fetch
 * metadata and open connections every few hundred milliseconds. A released consumer is taken again by the next task
 * with the same settings; one idle for a minute is closed.
 */
final class SourceConsumers {
    static final long IDLE_MS = 60_000L;

    private static final Map<Map<String, Object>, ArrayDeque<Idle>> IDLE = new HashMap<>();
    private static final Map<KafkaConsumer<byte[], byte[]>, Map<String, Object>> LENT = new IdentityHashMap<>();
    // settings whose query stopped: a consumer its last tasks give back is closed, not kept for a next one
    private static final Set<Map<String, Object>> STOPPED = new HashSet<>();

    private record Idle(KafkaConsumer<byte[], byte[]> consumer, long since) {
    }

    private SourceConsumers() {
    }

    /** The consumer settings the source forces: byte arrays, no group, no commits, no reset (a start below the log
     * start is the flow's to name, not the consumer's to skip). */
    static Map<String, Object> settings(Map<String, Object> given) {
        Map<String, Object> out = new HashMap<>(given);
        out.remove("group.id");
        out.put("enable.auto.commit", "false");
        out.put("auto.offset.reset", "none");
        out.put("key.deserializer", ByteArrayDeserializer.class.getName());
        out.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return out;
    }

    static synchronized KafkaConsumer<byte[], byte[]> acquire(Map<String, Object> config) {
        closeIdle(System.currentTimeMillis());
        STOPPED.remove(config);  // a query with these settings runs (again)
        ArrayDeque<Idle> idle = IDLE.get(config);
        KafkaConsumer<byte[], byte[]> consumer = idle == null || idle.isEmpty() ? null : idle.pop().consumer();
        if (consumer == null) {
            consumer = new KafkaConsumer<>(settings(config));
        }
        LENT.put(consumer, config);
        return consumer;
    }

    /** Back to the pool, every partition resumed (a paused one would stay paused in its next assignment). */
    static synchronized void release(KafkaConsumer<byte[], byte[]> consumer) {
        Map<String, Object> config = LENT.remove(consumer);
        try {
            consumer.resume(consumer.paused());
        } catch (RuntimeException e) {
            consumer.close(Duration.ZERO);
            return;
        }
        if (config == null || STOPPED.contains(config)) {
            consumer.close(Duration.ZERO);
        } else {
            IDLE.computeIfAbsent(config, c -> new ArrayDeque<>()).push(new Idle(consumer, System.currentTimeMillis()));
        }
    }

    /** Close a consumer whose task failed or was interrupted during a poll: its state is not to be trusted. */
    static synchronized void discard(KafkaConsumer<byte[], byte[]> consumer) {
        LENT.remove(consumer);
        consumer.close(Duration.ZERO);
    }

    /** Close every idle consumer with these settings, and those its tasks still hold when they give them back
     * (the flow's query stopped; in Real-Time Mode its tasks end after the stream). */
    static synchronized void closeAll(Map<String, Object> config) {
        STOPPED.add(config);
        ArrayDeque<Idle> idle = IDLE.remove(config);
        if (idle != null) {
            idle.forEach(i -> i.consumer().close(Duration.ZERO));
        }
    }

    private static void closeIdle(long now) {
        for (Iterator<ArrayDeque<Idle>> pools = IDLE.values().iterator(); pools.hasNext(); ) {
            ArrayDeque<Idle> pool = pools.next();
            pool.removeIf(i -> {
                if (now - i.since() > IDLE_MS) {
                    i.consumer().close(Duration.ZERO);
                    return true;
                }
                return false;
            });
            if (pool.isEmpty()) {
                pools.remove();
            }
        }
    }
}
