package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The source partitions one task of a writer has written, and their reports: each acknowledged stretch goes to
 * the query's {@link ReportChannel} once, a partition's in order. The task thread adds partitions; the reporter,
 * the channel's closer and the task read them.
 */
final class TaskPartitions {
    private final ConcurrentHashMap<String, TaskPartition> partitions = new ConcurrentHashMap<>();
    private final Object reportLock = new Object();

    /** The task's partition, made by {@code make} (topic, partition) the first time. */
    TaskPartition of(String topic, int partition, BiFunction<String, Integer, TaskPartition> make) {
        return partitions.computeIfAbsent(topic + "\u0000" + partition, k -> make.apply(topic, partition));
    }

    boolean allAcknowledged() {
        for (TaskPartition p : partitions.values()) {
            if (!p.log.allAcked()) {
                return false;
            }
        }
        return true;
    }

    /** Fail the task when a partition has records the target did not acknowledge. */
    void requireAcknowledged(String target) {
        for (TaskPartition p : partitions.values()) {
            if (!p.log.allAcked()) {
                throw new RecordPathException("records of " + p.log.topic + "-" + p.log.partition
                    + " were not acknowledged by cluster '" + target + "'; is it reachable?");
            }
        }
    }

    /** Exactly once: the next source offset of each partition the task moved past its committed one, per remote
     * partition, with the source topic's id (planned; "" when none) as metadata. */
    Map<TopicPartition, OffsetAndMetadata> nextPositions(Map<String, String> sourceTopicIds) {
        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
        for (TaskPartition p : partitions.values()) {
            if (p.log.seenNext() > p.committedNext) {
                next.put(new TopicPartition(p.log.remoteTopic, p.log.partition), new OffsetAndMetadata(
                    p.log.seenNext(), sourceTopicIds.getOrDefault(p.log.topic, "")));
            }
        }
        return next;
    }

    /** Report the acknowledged records not reported yet. */
    void report(ReportChannel channel) {
        synchronized (reportLock) {  // one report at a time, so a partition's summaries queue in order
            List<Map<String, Object>> out = new ArrayList<>();
            for (TaskPartition p : partitions.values()) {
                Map<String, Object> summary = p.log.report();
                if (summary != null) {
                    channel.reported(p.log.topic, p.log.partition, ((Number) summary.get("next_upstream")).longValue());
                    out.add(summary);
                }
            }
            if (!out.isEmpty()) {
                channel.offer(out);
            }
        }
    }
}
