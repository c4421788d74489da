package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;

/**
 * The flow source's offset: the next offset to read of every partition it reads, as JSON in the form of Spark's Kafka
 * source ({"topic": {"0": 42}}), sorted, so that equal positions are equal strings in Spark's offset log.
 */
final class SourcePositions extends Offset {
    private static final ObjectMapper JSON = new ObjectMapper();

    final TreeMap<String, TreeMap<Integer, Long>> next;

    SourcePositions(Map<String, ? extends Map<Integer, Long>> next) {
        this.next = new TreeMap<>();
        next.forEach((topic, parts) -> this.next.put(topic, new TreeMap<>(parts)));
    }

    static SourcePositions of(Map<TopicPartition, Long> next) {
        TreeMap<String, TreeMap<Integer, Long>> out = new TreeMap<>();
        next.forEach((tp, offset) -> out.computeIfAbsent(tp.topic(), t -> new TreeMap<>()).put(tp.partition(), offset));
        return new SourcePositions(out);
    }

    static SourcePositions parse(String json) {
        try {
            Map<String, Map<String, Long>> raw = JSON.readValue(json, new TypeReference<Map<String, Map<String, Long>>>() { });
            TreeMap<String, TreeMap<Integer, Long>> out = new TreeMap<>();
            raw.forEach((topic, parts) -> {
                TreeMap<Integer, Long> p = new TreeMap<>();
                parts.forEach((partition, offset) -> p.put(Integer.parseInt(partition), offset));
                out.put(topic, p);
            });
            return new SourcePositions(out);
        } catch (java.io.IOException e) {
            throw new RecordPathException("not a source position: " + json + " (" + e.getMessage() + ")");
        }
    }

    /** Every partition's next offset. */
    Map<TopicPartition, Long> byPartition() {
        Map<TopicPartition, Long> out = new java.util.LinkedHashMap<>();
        next.forEach((topic, parts) -> parts.forEach((p, offset) -> out.put(new TopicPartition(topic, p), offset)));
        return out;
    }

    /** One Real-Time Mode task's next offsets, sent to the driver when its epoch ends (merged by mergeOffsets). */
    record Part(Map<TopicPartition, Long> next) implements PartitionOffset {
        Part {
            next = new java.util.HashMap<>(next);  // a copy: the reader's own map moves on
        }
    }

    /** The positions of every task's part. */
    static SourcePositions merge(PartitionOffset[] parts) {
        Map<TopicPartition, Long> all = new java.util.HashMap<>();
        for (PartitionOffset part : parts) {
            all.putAll(((Part) part).next());
        }
        return of(all);
    }

    @Override
    public String json() {
        TreeMap<String, TreeMap<String, Long>> out = new TreeMap<>();
        next.forEach((topic, parts) -> {
            TreeMap<String, Long> p = new TreeMap<>((a, b) -> Integer.compare(Integer.parseInt(a), Integer.parseInt(b)));
            parts.forEach((partition, offset) -> p.put(String.valueOf(partition), offset));
            out.put(topic, p);
        });
        try {
            return JSON.writeValueAsString(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
