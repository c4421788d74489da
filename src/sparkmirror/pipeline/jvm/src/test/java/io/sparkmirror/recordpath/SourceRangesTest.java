package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class SourceRangesTest {
    private static Map<TopicPartition, Long> offsets(long... byPartition) {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        for (int p = 0; p < byPartition.length; p++) {
            out.put(new TopicPartition("t", p), byPartition[p]);
        }
        return out;
    }

    @Test
    void eachPartitionGoesWholeToOneOfAtMostTasksTasksBalancedByRecords() {
        Map<TopicPartition, Long> from = offsets(0, 0, 0, 0, 0, 5);
        Map<TopicPartition, Long> until = offsets(100, 10, 50, 40, 0, 5);
        List<List<SourceRanges.Range>> plan = SourceRanges.plan(from, until, 2);
        assertEquals(2, plan.size());
        Set<Integer> seen = new HashSet<>();
        long[] load = new long[2];
        for (int task = 0; task < 2; task++) {
            for (SourceRanges.Range r : plan.get(task)) {
                assertTrue(seen.add(r.partition()), "partition " + r.partition() + " in two tasks");
                load[task] += r.records();
            }
        }
        assertEquals(Set.of(0, 1, 2, 3), seen);  // 4 and 5 have no record in the batch
        assertEquals(List.of(100L, 100L), List.of(load[0], load[1]));
    }

    @Test
    void fewerPartitionsThanTasksMakeFewerTasks() {
        assertEquals(1, SourceRanges.plan(offsets(0, 7), offsets(3, 7), 4).size());
        assertEquals(0, SourceRanges.plan(offsets(3), offsets(3), 4).size());
    }

    @Test
    void aCapIsSharedInProportionToEachPartitionsBacklog() {
        Map<TopicPartition, Long> capped = SourceRanges.capped(offsets(0, 10, 0), offsets(300, 110, 0), 100);
        assertEquals(offsets(75, 35, 0), capped);
        assertEquals(offsets(300, 110, 0), SourceRanges.capped(offsets(0, 10, 0), offsets(300, 110, 0), 1000));
    }

    @Test
    void positionsAreSortedJsonInTheFormOfSparksKafkaSource() {
        Map<TopicPartition, Long> next = new LinkedHashMap<>();
        next.put(new TopicPartition("b", 10), 4L);
        next.put(new TopicPartition("b", 2), 7L);
        next.put(new TopicPartition("a", 0), 1L);
        String json = SourcePositions.of(next).json();
        assertEquals("{\"a\":{\"0\":1},\"b\":{\"2\":7,\"10\":4}}", json);
        assertEquals(json, SourcePositions.parse(json).json());
        assertEquals(next.keySet(), SourcePositions.parse(json).byPartition().keySet());
    }
}
