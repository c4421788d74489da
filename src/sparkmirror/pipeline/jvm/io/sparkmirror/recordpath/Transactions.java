package io.sparkmirror.recordpath;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
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
 * (keyed by the remote topic's partition, which has the same number): a writer skips the records below them,
 * so a batch replayed after a crash writes nothing twice.
 */
final class Transactions {
    private static final ConcurrentHashMap<String, KafkaProducer<byte[], byte[]>> PRODUCERS = new ConcurrentHashMap<>();
    private static final ConcurrentHashMap<List<Object>, Admin> ADMINS = new ConcurrentHashMap<>();
    private static final long POSITIONS_TIMEOUT_MS = 30_000;

    private Transactions() {
    }

    /** The producer of {@code transactionalId}, its transactions initialised (which fences older users of the id). */
    static KafkaProducer<byte[], byte[]> producer(Map<String, String> config, String transactionalId) {
        return PRODUCERS.computeIfAbsent(transactionalId, id -> {
            Map<String, String> settings = new HashMap<>(config);
            settings.put("transactional.id", id);
            KafkaProducer<byte[], byte[]> producer = Producers.create(settings);
            try {
                producer.initTransactions();
            } catch (RuntimeException e) {
                producer.close(Duration.ZERO);
                throw e;
            }
            return producer;
        });
    }

    /** Drop a producer that failed or was fenced: the next attempt makes a new one and fences what is left. */
    static void discard(String transactionalId, KafkaProducer<byte[], byte[]> producer) {
        if (PRODUCERS.remove(transactionalId, producer)) {
            try {
                producer.close(Duration.ZERO);
            } catch (RuntimeException ignored) {
                // already failed; nothing more to release
            }
        }
    }

    /** The next source offset committed for each remote partition whose offsets are stable (read after this
     * task's id fenced the attempt before it): a partition absent here may still have a commit being completed. */
    static Map<TopicPartition, Long> committed(Map<String, String> adminConfig, String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets = admin(adminConfig).listConsumerGroupOffsets(group,
                new ListConsumerGroupOffsetsOptions().requireStable(true))
            .partitionsToOffsetAndMetadata().get(POSITIONS_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        Map<TopicPartition, Long> out = new HashMap<>();
        offsets.forEach((tp, om) -> out.put(tp, om == null ? -1L : om.offset()));
        return out;
    }

    /** The next source offset committed for one remote partition, -1 when none was: asked by name, so a
     * partition without a commit is answered (the group-wide listing leaves out both it and one whose commit
     * is not stable yet, which the admin client drops); asked again until stable. */
    static long committedOf(Map<String, String> adminConfig, String group, TopicPartition tp) throws Exception {
        long deadline = System.currentTimeMillis() + POSITIONS_TIMEOUT_MS;
        while (true) {
            Map<TopicPartition, OffsetAndMetadata> offsets = admin(adminConfig).listConsumerGroupOffsets(
                    Map.of(group, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(tp))),
                    new ListConsumerGroupOffsetsOptions().requireStable(true))
                .partitionsToOffsetAndMetadata(group).get(POSITIONS_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            if (offsets.containsKey(tp)) {
                OffsetAndMetadata om = offsets.get(tp);
                return om == null ? -1L : om.offset();
            }
            if (System.currentTimeMillis() > deadline) {
                throw new java.util.concurrent.TimeoutException("the committed position of " + tp + " in group '"
                    + group + "' stayed unstable for " + POSITIONS_TIMEOUT_MS + " ms");
            }
            Thread.sleep(100);
        }
    }

    private static Admin admin(Map<String, String> adminConfig) {
        return ADMINS.computeIfAbsent(List.of(adminConfig), k -> Admin.create(new HashMap<>(adminConfig)));
    }
}
