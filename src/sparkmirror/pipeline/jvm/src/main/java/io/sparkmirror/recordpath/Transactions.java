package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;

/**
 * Exactly-once writes: transactional producers per JVM, one per transactional id, and the positions the
 * target has committed.
 *
 * <p>A task's transactional id is the flow's prefix and the task's partition id, so a retried or speculative
 * attempt of the same task takes the same id and its first {@code initTransactions()} fences the attempt
 * before it (on any executor): only one of them can commit. Each transaction carries the records and, as
 * offsets of the flow's positions group on the target, the next source offset of every partition it wrote
 * (keyed by the remote topic's partition, which has the same number; the source topic's id as metadata): a
 * writer skips the records below them, so a batch replayed after a crash writes nothing twice.
 *
 * <p>Which task holds which partition changes between queries (and a smaller tasks.max leaves ids unused), so
 * before each query the driver fences every id of the flow the target knows ({@link #takeOver}): a task of an
 * earlier query still running somewhere cannot commit afterwards, and no transaction is left open to hold
 * the committed positions unstable.
 */
public final class Transactions {
    /** A producer and the query generation (the writer's channel) it was made for. */
    private record Held(String generation, Map<String, String> config, KafkaProducer<byte[], byte[]> producer) {
    }

    private static final ConcurrentHashMap<String, Held> PRODUCERS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<List<Object>, Admin> ADMINS = new ConcurrentHashMap<>();
    private static final long POSITIONS_TIMEOUT_MS = 30_000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<TransactionState> SETTLED = EnumSet.of(TransactionState.EMPTY,
        TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT);

    private Transactions() {
    }

    /** The producer of {@code transactionalId} for this query generation, its transactions initialised (which
     * fences older users of the id); one made for an earlier generation was fenced by {@link #takeOver}. */
    static KafkaProducer<byte[], byte[]> producer(Map<String, String> config, String transactionalId,
                                                  String generation) {
        return PRODUCERS.compute(transactionalId, (id, held) -> {
            if (held != null && held.generation.equals(generation) && held.config.equals(config)) {
                return held;
            }
            if (held != null) {
                closeQuietly(held.producer);
            }
            Map<String, String> settings = new HashMap<>(config);
            settings.put("transactional.id", id);
            KafkaProducer<byte[], byte[]> producer = Producers.create(settings);
            try {
                producer.initTransactions();
            } catch (RuntimeException e) {
                closeQuietly(producer);
                throw e;
            }
            return new Held(generation, Map.copyOf(config), producer);
        }).producer;
    }

    /** Drop a producer that failed or was fenced: the next attempt makes a new one and fences what is left. */
    static void discard(String transactionalId, KafkaProducer<byte[], byte[]> producer) {
        Held held = PRODUCERS.get(transactionalId);
        if (held != null && held.producer == producer && PRODUCERS.remove(transactionalId, held)) {
            closeQuietly(producer);
        }
    }

    /**
     * Before a query of the flow starts (called by the driver): fence every transactional id of the flow the
     * target lists (ids {@code prefix-*}), wait until none has a transaction in progress, then return the
     * committed positions as JSON, {@code [[remote topic, partition, next source offset, source topic id]]}.
     */
    public static String takeOver(String adminJson, String prefix, String group, long timeoutMs) throws Exception {
        Map<String, String> adminConfig = JSON.readValue(adminJson, new TypeReference<Map<String, String>>() { });
        Admin admin = admin(adminConfig);
        long deadline = System.currentTimeMillis() + timeoutMs;
        List<String> ids = new ArrayList<>();
        for (TransactionListing t : admin.listTransactions().all().get(timeoutMs, TimeUnit.MILLISECONDS)) {
            if (t.transactionalId().startsWith(prefix + "-")) {
                ids.add(t.transactionalId());
            }
        }
        PRODUCERS.forEach((id, held) -> {  // this JVM's (local mode): fenced below, of no use to the next query
            if (id.startsWith(prefix + "-") && PRODUCERS.remove(id, held)) {
                closeQuietly(held.producer);
            }
        });
        if (!ids.isEmpty()) {
            admin.fenceProducers(ids).all().get(remaining(deadline), TimeUnit.MILLISECONDS);
            while (true) {
                List<String> open = new ArrayList<>();
                for (Map.Entry<String, TransactionDescription> e : admin.describeTransactions(ids).all()
                        .get(remaining(deadline), TimeUnit.MILLISECONDS).entrySet()) {
                    if (!SETTLED.contains(e.getValue().state())) {
                        open.add(e.getKey() + " " + e.getValue().state());
                    }
                }
                if (open.isEmpty()) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new java.util.concurrent.TimeoutException("transactions still open after fencing: " + open);
                }
                Thread.sleep(50);
            }
        }
        List<Object> out = new ArrayList<>();
        committed(adminConfig, group, remaining(deadline)).forEach((tp, om) -> {
            if (om != null) {
                out.add(List.of(tp.topic(), tp.partition(), om.offset(), topicIdOf(om)));
            }
        });
        return JSON.writeValueAsString(out);
    }

    /** The source topic id a position was committed with ("" for none). A position committed from Python
     * (librdkafka, through confluent-kafka: at least once, or `sparkmirror takeover`) carries a NUL after it in its
     * metadata, which Java reads as part of the string: without this, exactly once would not know the position
     * and would copy the partition again from its start. */
    static String topicIdOf(OffsetAndMetadata committed) {
        String metadata = committed.metadata();
        if (metadata == null) {
            return "";
        }
        int end = metadata.length();
        while (end > 0 && metadata.charAt(end - 1) == '\0') {
            end--;
        }
        return metadata.substring(0, end);
    }

    /** The committed positions of every remote partition whose offsets are stable (read after this task's id
     * fenced the attempt before it): a partition absent here may still have a commit being completed. */
    static Map<TopicPartition, OffsetAndMetadata> committed(Map<String, String> adminConfig, String group)
            throws Exception {
        return committed(adminConfig, group, POSITIONS_TIMEOUT_MS);
    }

    /** As {@link #committed(Map, String)}, within {@code timeoutMs}; a null value: no committed position. */
    private static Map<TopicPartition, OffsetAndMetadata> committed(Map<String, String> adminConfig, String group,
            long timeoutMs) throws Exception {
        return admin(adminConfig).listConsumerGroupOffsets(group,
                new ListConsumerGroupOffsetsOptions().requireStable(true))
            .partitionsToOffsetAndMetadata().get(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** The committed position of one remote partition, null when none was: asked by name, so a partition
     * without a commit is answered (the group-wide listing leaves out both it and one whose commit is not
     * stable yet, which the admin client drops); asked again until stable. */
    static OffsetAndMetadata committedOf(Map<String, String> adminConfig, String group, TopicPartition tp)
            throws Exception {
        long deadline = System.currentTimeMillis() + POSITIONS_TIMEOUT_MS;
        while (true) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin(adminConfig).listConsumerGroupOffsets(
                    Map.of(group, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp))),
                    new ListConsumerGroupOffsetsOptions().requireStable(true))
                .partitionsToOffsetAndMetadata(group).get(POSITIONS_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (offsets.containsKey(tp)) {
                return offsets.get(tp);
            }
            if (System.currentTimeMillis() > deadline) {
                throw new java.util.concurrent.TimeoutException("the committed position of " + tp + " in group '"
                    + group + "' stayed unstable for " + POSITIONS_TIMEOUT_MS + " ms");
            }
            Thread.sleep(100);
        }
    }

    private static long remaining(long deadline) {
        return Math.max(1, deadline - System.currentTimeMillis());
    }

    private static void closeQuietly(KafkaProducer<byte[], byte[]> producer) {
        try {
            producer.close(Duration.ZERO);
        } catch (RuntimeException ignored) {
            // already failed; nothing more to release
        }
    }

    private static Admin admin(Map<String, String> adminConfig) {
        return ADMINS.computeIfAbsent(List.of(adminConfig), k -> Admin.create(new HashMap<>(adminConfig)));
    }
}
