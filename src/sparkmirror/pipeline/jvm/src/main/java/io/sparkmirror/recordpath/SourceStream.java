package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;

/**
 * The flow source in micro-batches: the partitions the flow assigns, from the offsets it starts them at (its own
 * positions, as for Spark's Kafka source), each batch up to the partitions' ends (the last stable offsets under
 * read_committed), or a share of {@code maxOffsetsPerTrigger}; read by at most {@code tasks} tasks of many partitions.
 * In Real-Time Mode the same tasks read without an end, each epoch from where the last one's tasks got to.
 *
 * <p>Options as for Spark's Kafka source where they mean the same: {@code kafka.*} (the consumer's settings),
 * {@code assign}, {@code startingOffsets}, {@code maxOffsetsPerTrigger}; and {@code tasks}, {@code pollMs},
 * {@code stallMs} (a task with no record for that long before its end fails).
 */
final class SourceStream implements MicroBatchStream, SupportsTriggerAvailableNow, SupportsRealTimeMode {
    static final long DEFAULT_STALL_MS = 120_000L;  // Spark's Kafka source's poll timeout (spark.network.timeout)
    static final long DEFAULT_POLL_MS = 500L;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<TopicPartition> partitions = new ArrayList<>();
    private final SourcePositions starting;
    private final Map<TopicPartition, Long> startingOffsets;  // the same, by partition, made once
    private final HashMap<String, Object> consumerConfig = new HashMap<>();
    private final long maxOffsets;
    private final int tasks;
    private final long pollMs;
    private final long stallMs;
    private final SourceTask.Batching batching;  // Real-Time Mode's batched fetches, or null
    private KafkaConsumer<byte[], byte[]> ends;  // the driver's, for end offsets
    private Map<TopicPartition, Long> availableNow;  // AvailableNow: the ends when the query started

    SourceStream(Map<String, String> options) {
        options.forEach((k, v) -> {
            if (k.startsWith("kafka.")) {
                consumerConfig.put(k.substring("kafka.".length()), v);
            }
        });
        try {
            Map<String, List<Integer>> assign = JSON.readValue(required(options, "assign"),
                new TypeReference<Map<String, List<Integer>>>() { });
            assign.forEach((topic, parts) -> parts.forEach(p -> partitions.add(new TopicPartition(topic, p))));
        } catch (java.io.IOException e) {
            throw new RecordPathException("option assign: not JSON of topic -> partitions: " + e.getMessage());
        }
        this.starting = SourcePositions.parse(required(options, "startingOffsets"));
        this.startingOffsets = starting.byPartition();
        this.maxOffsets = Long.parseLong(options.getOrDefault("maxOffsetsPerTrigger", "0"));
        this.tasks = Integer.parseInt(options.getOrDefault("tasks", "2"));
        this.pollMs = Long.parseLong(options.getOrDefault("pollMs", String.valueOf(DEFAULT_POLL_MS)));
        this.stallMs = Long.parseLong(options.getOrDefault("stallMs", String.valueOf(DEFAULT_STALL_MS)));
        this.batching = batching(options, consumerConfig);
        for (TopicPartition tp : partitions) {
            if (!startingOffsets.containsKey(tp)) {
                throw new RecordPathException("option startingOffsets has no offset for assigned partition " + tp);
            }
        }
    }

    /** Options batchFetchesAbove, batchFetchMinBytes and batchFetchMaxWaitMs: the consumer settings of batched
     * fetches, and the polls with records a second above which a Real-Time Mode task uses them. */
    private static SourceTask.Batching batching(Map<String, String> options, Map<String, Object> consumerConfig) {
        int above = Integer.parseInt(options.getOrDefault("batchFetchesAbove", "0"));
        if (above <= 0) {
            return null;
        }
        HashMap<String, Object> batched = new HashMap<>(consumerConfig);
        batched.put("fetch.min.bytes", required(options, "batchFetchMinBytes"));
        batched.put("fetch.max.wait.ms", required(options, "batchFetchMaxWaitMs"));
        return new SourceTask.Batching(above, batched);
    }

    private static String required(Map<String, String> options, String key) {
        String value = options.get(key);
        if (value == null) {
            throw new RecordPathException("the flow source needs option " + key);
        }
        return value;
    }

    @Override
    public Offset initialOffset() {
        return starting;
    }

    @Override
    public Offset deserializeOffset(String json) {
        return SourcePositions.parse(json);
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("the flow source takes a read limit: latestOffset(start, limit)");
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        return maxOffsets > 0 ? ReadLimit.maxRows(maxOffsets) : ReadLimit.allAvailable();
    }

    @Override
    public void prepareForTriggerAvailableNow() {
        availableNow = endOffsets();
    }

    @Override
    public Offset latestOffset(Offset start, ReadLimit limit) {
        Map<TopicPartition, Long> from = ((SourcePositions) start).byPartition();
        Map<TopicPartition, Long> end = availableNow != null ? availableNow : endOffsets();
        Map<TopicPartition, Long> upTo = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            long begin = from.getOrDefault(tp, startingOffsets.get(tp));
            upTo.put(tp, Math.max(begin, end.getOrDefault(tp, begin)));  // an end below it (truncated): nothing
        }
        if (limit instanceof ReadMaxRows rows) {
            upTo = SourceRanges.capped(from, upTo, rows.maxRows());
        }
        return SourcePositions.of(upTo);
    }

    private synchronized Map<TopicPartition, Long> endOffsets() {
        if (ends == null) {
            ends = new KafkaConsumer<>(SourceConsumers.settings(consumerConfig));
        }
        return ends.endOffsets(partitions, Duration.ofMillis(stallMs));
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start, Offset end) {
        List<List<SourceRanges.Range>> plan = SourceRanges.plan(((SourcePositions) start).byPartition(),
                                                                 ((SourcePositions) end).byPartition(), tasks);
        InputPartition[] out = new InputPartition[plan.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = new SourceTask(plan.get(i), consumerConfig, pollMs, stallMs, false, null);
        }
        return out;
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start) {
        Map<TopicPartition, Long> from = ((SourcePositions) start).byPartition();
        List<List<SourceRanges.Range>> plan = SourceRanges.endless(from, tasks);
        InputPartition[] out = new InputPartition[plan.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = new SourceTask(plan.get(i), consumerConfig, pollMs, stallMs, true, batching);
        }
        return out;
    }

    @Override
    public Offset mergeOffsets(PartitionOffset[] offsets) {
        return SourcePositions.merge(offsets);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new SourceTask.Readers();
    }

    @Override
    public void commit(Offset end) {
        // the flow's positions are its own (reported by the writer): nothing to commit to Kafka
    }

    @Override
    public synchronized void stop() {
        if (ends != null) {
            ends.close(Duration.ZERO);
            ends = null;
        }
        SourceConsumers.closeAll(consumerConfig);  // in local mode the tasks' consumers are in this JVM
        if (batching != null) {
            SourceConsumers.closeAll(batching.consumerConfig());
        }
    }
}
