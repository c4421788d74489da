package io.sparkmirror.recordpath;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One task of the flow source: one consumer reads all of the task's partitions and hands their records on as rows in
 * the shape of Spark's Kafka source (so the flow's projection and writer take either).
 *
 * <p>In a micro-batch each partition is read from its first offset until its last; it is done once the consumer's
 * position reaches its end, which also passes transaction markers and compaction gaps there. In Real-Time Mode the
 * partitions have no end: Spark asks for the next record with a time-out ({@link #nextWithTimeout}) and, when the
 * epoch ends, for the next offset of each partition ({@link #getOffset}), where the next epoch starts.
 *
 * <p>In Real-Time Mode with batching (the default) a task holds two consumers, one of plain and one of batched
 * fetches, and polls the one {@link FetchPace} chooses.
 *
 * <p>A start below the partition's log start fails the task, as Spark's Kafka source does with failOnDataLoss: the
 * flow restarts and names the records removed.
 */
final class SourceReader implements SupportsRealTimeRead<InternalRow> {
    private KafkaConsumer<byte[], byte[]> consumer;  // the one polled
    private KafkaConsumer<byte[], byte[]> spare;  // Real-Time Mode with batching: the other one (FetchPace), else null
    private final FetchPace pace;
    private final Map<TopicPartition, Long> until = new HashMap<>();
    private final Set<TopicPartition> open = new HashSet<>();
    private final Map<TopicPartition, Long> next = new HashMap<>();  // the next offset to hand on, per partition
    private final boolean realTime;
    private final long pollMs;
    private final long stallMs;
    private Iterator<ConsumerRecord<byte[], byte[]>> fetched = java.util.Collections.emptyIterator();
    private InternalRow current;
    private long progressAt = System.currentTimeMillis();
    private boolean broken;  // the last poll did not return: the consumer is closed, not kept
    private boolean batchedNow;  // the polled consumer is the one of batched fetches

    SourceReader(SourceTask task) {
        SkipAhead.clear();  // an earlier task of this thread's
        this.consumer = SourceConsumers.acquire(task.consumerConfig);
        this.pace = task.batching == null ? null : new FetchPace(task.batching.above(), System.currentTimeMillis());
        this.pollMs = task.pollMs;
        this.stallMs = task.stallMs;
        this.realTime = task.realTime;
        List<TopicPartition> assigned = new ArrayList<>();
        for (SourceRanges.Range r : task.ranges) {
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            assigned.add(tp);
            until.put(tp, r.until());
            next.put(tp, r.from());
            open.add(tp);
        }
        try {
            if (pace != null) {
                spare = SourceConsumers.acquire(task.batching.consumerConfig());
                spare.assign(assigned);
            }
            consumer.assign(assigned);
            for (SourceRanges.Range r : task.ranges) {
                consumer.seek(new TopicPartition(r.topic(), r.partition()), r.from());
            }
        } catch (RuntimeException e) {
            SourceConsumers.discard(consumer);  // no reader to close it
            if (spare != null) {
                SourceConsumers.discard(spare);
            }
            throw e;
        }
    }

    @Override
    public boolean next() {
        while (true) {
            if (take()) {
                return true;
            }
            for (TopicPartition tp : new ArrayList<>(open)) {
                if (consumer.position(tp) >= until.get(tp)) {
                    close(tp);
                }
            }
            if (open.isEmpty()) {
                return false;
            }
            poll(pollMs);
        }
    }

    @Override
    public RecordStatus nextWithTimeout(Long startTimeMs, Long timeoutMs) {
        long deadline = startTimeMs + timeoutMs;
        while (true) {
            if (take()) {
                return RecordStatus.newStatusWithoutArrivalTime(true);
            }
            long wait = deadline - System.currentTimeMillis();
            if (wait <= 0) {
                return RecordStatus.newStatusWithoutArrivalTime(false);
            }
            poll(Math.min(wait, pollMs));
        }
    }

    @Override
    public PartitionOffset getOffset() {
        return new SourcePositions.Part(next);
    }

    /** The next fetched record of an open partition as the current row; false when none is fetched. */
    private boolean take() {
        while (fetched.hasNext()) {
            ConsumerRecord<byte[], byte[]> record = fetched.next();
            TopicPartition tp = new TopicPartition(record.topic(), record.partition());
            if (!open.contains(tp)) {
                continue;
            }
            if (record.offset() >= until.get(tp)) {
                close(tp);
                continue;
            }
            current = row(record);
            next.put(tp, record.offset() + 1);
            return true;
        }
        return false;
    }

    private void poll(long waitMs) {
        skipAhead();
        if (pace != null && pace.batched() != batchedNow) {
            swap();
        }
        broken = true;  // until the poll returns: an interrupted or failed consumer is not given back to the pool
        try {
            var records = consumer.poll(Duration.ofMillis(waitMs));
            broken = false;
            long now = System.currentTimeMillis();
            if (pace != null) {
                pace.afterPoll(now, !records.isEmpty());
            }
            if (!records.isEmpty() || realTime) {  // in Real-Time Mode no record for a while is no stall
                progressAt = now;
            } else if (now - progressAt > stallMs) {
                throw new RecordPathException("reading " + open + ": no record for " + stallMs + " ms before the "
                    + "batch's end offsets " + ends() + ". Is the source cluster reachable?");
            }
            fetched = records.iterator();
        } catch (OffsetOutOfRangeException e) {
            throw new RecordPathException("records removed at the source before they were read: "
                + e.offsetOutOfRangePartitions() + " (offsets no longer on the source; Spark's Kafka source calls this "
                + "data loss). The flow starts again from the source's log start and names them");
        }
    }

    /**
     * Poll the other consumer from here on, from where this one is: every record this one returned has been handed on
     * (a poll comes only once they are), and its position is past any transaction marker it read. What the other one
     * fetched before is dropped by the seek; what this one has in flight is dropped by its own next seek.
     */
    private void swap() {
        for (TopicPartition tp : open) {
            spare.seek(tp, consumer.position(tp));
        }
        KafkaConsumer<byte[], byte[]> polled = consumer;
        consumer = spare;
        spare = polled;
        batchedNow = !batchedNow;
    }

    /** A retried task: seek past the records its writer found already on the target (see {@link SkipAhead}). */
    private void skipAhead() {
        Map<TopicPartition, Long> written = SkipAhead.take();
        if (written == null) {
            return;
        }
        written.forEach((tp, to) -> {
            if (open.contains(tp) && to > next.get(tp)) {
                long target = Math.min(to, until.get(tp));
                consumer.seek(tp, target);
                next.put(tp, target);
                if (target >= until.get(tp)) {
                    close(tp);
                }
            }
        });
    }

    private Map<TopicPartition, Long> ends() {
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : open) {
            out.put(tp, until.get(tp));
        }
        return out;
    }

    private void close(TopicPartition tp) {
        open.remove(tp);
        consumer.pause(List.of(tp));  // its later records are not fetched for nothing
        if (spare != null) {
            spare.pause(List.of(tp));
        }
    }

    @Override
    public InternalRow get() {
        return current;
    }

    @Override
    public void close() {
        SkipAhead.clear();
        if (broken) {
            SourceConsumers.discard(consumer);
        } else {
            SourceConsumers.release(consumer);
        }
        if (spare != null) {
            SourceConsumers.release(spare);  // not inside a poll: back to the pool (a fetch in flight is dropped by
                                             // its next task's seek)
        }
    }

    /** A record as Spark's Kafka source's row: key, value, topic, partition, offset, timestamp (micros),
     * timestampType, headers (null when none). */
    static InternalRow row(ConsumerRecord<byte[], byte[]> r) {
        Object headers = null;
        Header[] all = r.headers().toArray();
        if (all.length > 0) {
            Object[] rows = new Object[all.length];
            for (int i = 0; i < all.length; i++) {
                rows[i] = new GenericInternalRow(new Object[] {UTF8String.fromString(all[i].key()), all[i].value()});
            }
            headers = new GenericArrayData(rows);
        }
        return new GenericInternalRow(new Object[] {r.key(), r.value(), UTF8String.fromString(r.topic()), r.partition(),
            r.offset(), r.timestamp() * 1000L, r.timestampType().id, headers});
    }
}
