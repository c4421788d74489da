package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Pure: which task reads which partitions of a micro-batch. Each partition with records in [from, until) goes whole to
 * one task (so its records stay in order), and the partitions are spread over at most {@code tasks} tasks by record
 * count, largest first to the least-loaded task: a few tasks over many partitions, as MM2's tasks, instead of Spark's
 * Kafka source's one task per partition.
 */
final class SourceRanges {
    private SourceRanges() {
    }

    /** One partition's records to read: offsets in [from, until). */
    record Range(String topic, int partition, long from, long until) implements java.io.Serializable {
        long records() {
            return until - from;
        }
    }

    /** The ranges of each task, none empty; partitions without records between the two positions are left out. */
    static List<List<Range>> plan(Map<TopicPartition, Long> from, Map<TopicPartition, Long> until, int tasks) {
        List<Range> ranges = new ArrayList<>();
        until.forEach((tp, end) -> {
            Long start = from.get(tp);
            long begin = start == null ? 0L : start;
            if (end > begin) {
                ranges.add(new Range(tp.topic(), tp.partition(), begin, end));
            }
        });
        ranges.sort(Comparator.comparingLong(Range::records).reversed()
            .thenComparing(Range::topic).thenComparingInt(Range::partition));
        int n = Math.max(1, Math.min(tasks, ranges.size()));
        List<List<Range>> out = new ArrayList<>();
        long[] load = new long[n];
        for (int i = 0; i < n; i++) {
            out.add(new ArrayList<>());
        }
        for (Range r : ranges) {
            int least = 0;
            for (int i = 1; i < n; i++) {
                if (load[i] < load[least]) {
                    least = i;
                }
            }
            out.get(least).add(r);
            load[least] += r.records();
        }
        out.removeIf(List::isEmpty);
        return out;
    }

    /** Real-Time Mode's tasks: every partition, from its offset without an end, dealt round the tasks in order. */
    static List<List<Range>> endless(Map<TopicPartition, Long> from, int tasks) {
        List<TopicPartition> order = new ArrayList<>(from.keySet());
        order.sort(Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition));
        int n = Math.max(1, Math.min(tasks, order.size()));
        List<List<Range>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new ArrayList<>());
        }
        for (int i = 0; i < order.size(); i++) {
            TopicPartition tp = order.get(i);
            out.get(i % n).add(new Range(tp.topic(), tp.partition(), from.get(tp), Long.MAX_VALUE));
        }
        out.removeIf(List::isEmpty);
        return out;
    }

    /**
     * The positions a batch may read up to: each partition's end, or with {@code maxRecords} (a micro-batch cap) a
     * share of it in proportion to each partition's backlog, as Spark's Kafka source splits maxOffsetsPerTrigger.
     */
    static Map<TopicPartition, Long> capped(Map<TopicPartition, Long> from, Map<TopicPartition, Long> ends,
                                            long maxRecords) {
        long backlog = 0;
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            backlog += Math.max(0, e.getValue() - from.getOrDefault(e.getKey(), 0L));
        }
        if (maxRecords <= 0 || backlog <= maxRecords) {
            return ends;
        }
        Map<TopicPartition, Long> out = new java.util.LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            long start = from.getOrDefault(e.getKey(), 0L);
            long lag = Math.max(0, e.getValue() - start);
            long share = (long) Math.floor((double) lag * maxRecords / backlog);
            out.put(e.getKey(), start + Math.min(lag, Math.max(share, lag > 0 ? 1 : 0)));
        }
        return out;
    }
}
