package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;

/**
 * The record path's sink: each source record becomes one producer record on the target with the same key,
 * value, headers (in order), timestamp and partition, in the JVM, with no Python call per record.
 *
 * <p>Rows are (topic, partition, offset, timestamp_ms, key, value, headers). Each record's target offset
 * comes from its acknowledgement (acks=all, idempotent, so a partition's acknowledgements arrive in send
 * order); acknowledged records are reported to the flow's {@link ReportChannel} as exact offset syncs and
 * the partition's next upstream offset, which is what moves the flow's positions. A record is never
 * reported before the target acknowledged it, so nothing is skipped; a failed send fails the task.
 *
 * <p>Exactly once (the spec's {@code exactly_once}): a task's records and the next source offset of each of its
 * partitions commit in one transaction on the target (see {@link Transactions}); records below the committed
 * offsets are skipped, and nothing is reported to the driver before the commit.
 */
public final class MirrorWriter extends ForeachWriter<Row> {
    private static final long serialVersionUID = 1L;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MirrorWriter.class);

    private final String channelId;
    private final String target;
    private final HashMap<String, String> producerConfig;
    private final HashMap<String, String> remoteTopics;
    private final HashMap<String, String> provenance;  // source, target; null: no provenance header
    private final HashMap<String, Object> transforms;  // MM2's transforms (TransformStep.of); null: none
    private final HashMap<String, Integer> messageLimits;  // remote topic -> its max.message.bytes
    private final boolean filtered;  // a SQL filter's verdict is column 7 ("keep")
    private final int producerSlots;
    private final HashMap<String, String> sourceAdmin;  // Java admin settings of the source cluster
    private final HashMap<String, String> sourceTopicIds;  // topic -> the id the query was planned with

    private final HashMap<String, Object> driver;  // the driver's channel endpoint; null in local mode
    private final String transactionalPrefix;  // null: at least once
    private final String positionsGroup;  // the target's group holding the committed positions
    private final HashMap<String, String> targetAdmin;  // Java admin settings of the target
    private final long reportIntervalMs;
    private transient ReportChannel channel;
    private transient Provenance stamp;  // null: no provenance header
    private transient TransformStep step;  // null: no transforms
    private transient org.apache.kafka.common.record.CompressionType compression;
    private transient KafkaProducer<byte[], byte[]> producer;
    private transient int slot;
    private transient ConcurrentHashMap<String, Partition> partitions;
    private transient Partition last;  // rows come partition by partition
    private transient Object reportLock;
    private transient volatile boolean stopped;
    private transient volatile String error;
    private transient long sending;  // the record in send(): the producer reports a refusal during the call
    private transient String transactionalId;  // this task's, when exactly once
    private transient Map<TopicPartition, OffsetAndMetadata> committed;  // per remote partition: next source
                                                                          // offset, source topic id
    private transient volatile boolean mayReport;  // exactly once: only once the transaction is committed

    /** {@code spec}: JSON with channel, target, producer (Java client settings), producer_slots (producers
     * per configuration, the flow's tasks.max), remote_topics, provenance, and on a cluster driver (the
     * endpoint of the driver's {@link ChannelServer}) and report_interval_ms. */
    public MirrorWriter(String spec) throws Exception {
        Map<String, Object> s = new ObjectMapper().readValue(spec, new TypeReference<Map<String, Object>>() { });
        this.channelId = (String) s.get("channel");
        this.target = (String) s.get("target");
        this.producerConfig = strings(s.get("producer"));
        this.remoteTopics = strings(s.get("remote_topics"));
        this.producerSlots = Math.max(1, ((Number) s.get("producer_slots")).intValue());
        this.sourceAdmin = s.get("source_admin") == null ? null : strings(s.get("source_admin"));
        this.sourceTopicIds = s.get("source_topic_ids") == null ? new HashMap<>() : strings(s.get("source_topic_ids"));
        @SuppressWarnings("unchecked")
        Map<String, Object> endpoint = (Map<String, Object>) s.get("driver");
        this.driver = endpoint == null ? null : new HashMap<>(endpoint);
        this.reportIntervalMs = s.get("report_interval_ms") == null ? 0L : ((Number) s.get("report_interval_ms")).longValue();
        this.provenance = s.get("provenance") == null ? null : strings(s.get("provenance"));
        @SuppressWarnings("unchecked")
        Map<String, Object> chain = (Map<String, Object>) s.get("transforms");
        this.transforms = chain == null ? null : new HashMap<>(chain);
        this.filtered = Boolean.TRUE.equals(s.get("filtered"));
        this.messageLimits = new HashMap<>();
        if (s.get("message_limits") != null) {
            strings(s.get("message_limits")).forEach((topic, limit) -> messageLimits.put(topic, Integer.parseInt(limit)));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> once = (Map<String, Object>) s.get("exactly_once");
        this.transactionalPrefix = once == null ? null : (String) once.get("transactional_id");
        this.positionsGroup = once == null ? null : (String) once.get("positions_group");
        this.targetAdmin = once == null ? null : strings(once.get("admin"));
    }

    @SuppressWarnings("unchecked")
    private static HashMap<String, String> strings(Object map) {
        HashMap<String, String> out = new HashMap<>();
        ((Map<String, Object>) map).forEach((k, v) -> out.put(k, String.valueOf(v)));
        return out;
    }

    @Override
    public boolean open(long partitionId, long epochId) {
        QuietFailures.install();
        partitions = new ConcurrentHashMap<>();
        reportLock = new Object();
        channel = ReportChannel.forWriter(channelId, driver, reportIntervalMs);
        if (channel == null || channel.isClosed()) {
            return false;  // the query is being stopped: these records are read again by the next one
        }
        stamp = provenance == null ? null : new Provenance(provenance.get("source"), provenance.get("target"));
        step = transforms == null ? null : TransformStep.of(transforms);
        compression = org.apache.kafka.common.record.CompressionType.forName(
            producerConfig.getOrDefault("compression.type", "none"));
        if (transactionalPrefix == null) {
            slot = (int) (partitionId % producerSlots);
            producer = Producers.get(producerConfig, slot);
            mayReport = true;
        } else {
            beginTransaction(transactionalPrefix + "-" + partitionId);
        }
        channel.opened(this);
        return true;
    }

    /** Take this task's transactional producer (fencing earlier attempts), read the committed positions, begin. */
    private void beginTransaction(String id) {
        transactionalId = id;
        mayReport = false;
        try {
            producer = Transactions.producer(producerConfig, id, channelId);
            try {
                producer.beginTransaction();
            } catch (RuntimeException e) {  // fenced by another attempt, or left in a transaction: start afresh
                Transactions.discard(id, producer);
                producer = Transactions.producer(producerConfig, id, channelId);
                producer.beginTransaction();
            }
            committed = Transactions.committed(targetAdmin, positionsGroup);
        } catch (Exception e) {
            throw new RecordPathException("exactly-once writing to cluster '" + target + "' could not start "
                + "transactional id '" + id + "': " + e.getMessage() + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    @Override
    public void process(Row row) {
        synchronized (this) {
            if (stopped) {
                return;  // not counted in any position: the next query reads it again
            }
            if (error != null) {
                throw new RecordPathException(error);
            }
            String topic = row.getString(0);
            int partition = row.getInt(1);
            long offset = row.getLong(2);
            Partition p = last;
            if (p == null || p.log.partition != partition || !p.log.topic.equals(topic)) {
                p = last = partitions.computeIfAbsent(topic + "\u0000" + partition, k -> new Partition(topic, partition));
            }
            if (offset < p.writtenNext) {
                p.log.skipped(offset);  // written by an earlier attempt of this task (committed, or reported)
                return;
            }
            long now = System.currentTimeMillis();
            if (now - p.topicCheckedAt >= SourceTopics.FRESH_MS) {
                checkTopicId(topic);
                p.topicCheckedAt = now;
            }
            if (filtered && !row.getBoolean(7)) {
                p.log.dropped();
                p.log.skipped(offset);
                return;
            }
            byte[] key = row.isNullAt(4) ? null : (byte[]) row.get(4);
            byte[] value = row.isNullAt(5) ? null : (byte[]) row.get(5);
            long timestamp = Math.max(row.getLong(3), 0L);
            ProducerRecord<byte[], byte[]> record = step == null ? plain(row, p, partition, timestamp, key, value)
                : shaped(row, p, topic, offset, partition, timestamp, key, value);
            if (record == null) {
                p.log.skipped(offset);
                return;
            }
            if (record == TransformStep.FAILED) {
                p.log.failed(offset);
                return;
            }
            int size = RecordSize.upperBound(record, compression);
            if (size > p.messageLimit) {
                refuse(p, offset, size);
            }
            p.log.sent(offset, timestamp, now);
            sending = offset;
            producer.send(record, p);
        }
    }

    /** The record as it was, the provenance header stamped; null when the target already saw it. */
    private ProducerRecord<byte[], byte[]> plain(Row row, Partition p, int partition, long timestamp, byte[] key,
                                                 byte[] value) {
        List<Row> raw = row.isNullAt(6) ? null : row.getList(6);
        Header[] headers;
        if (stamp == null) {
            int n = raw == null ? 0 : raw.size();
            headers = new Header[n];
            for (int i = 0; i < n; i++) {
                Row h = raw.get(i);
                headers[i] = new RecordHeader(h.getString(0), h.isNullAt(1) ? null : (byte[]) h.get(1));
            }
        } else {
            headers = stamp.stamp(raw);
            if (headers == null) {
                return null;
            }
        }
        return new ProducerRecord<>(p.log.remoteTopic, partition, timestamp, key, value, java.util.Arrays.asList(headers));
    }

    /** The record through the flow's transforms: null when the target already saw it or a transform dropped it
     * (counted as dropped), {@link TransformStep#FAILED} when a failure was tolerated. */
    private ProducerRecord<byte[], byte[]> shaped(Row row, Partition p, String topic, long offset, int partition,
                                                  long timestamp, byte[] key, byte[] value) {
        List<Row> raw = row.isNullAt(6) ? null : row.getList(6);
        byte[] provenanceValue = null;
        if (stamp != null) {
            provenanceValue = stamp.nextOf(raw);
            if (provenanceValue == null) {
                return null;
            }
        }
        if (p.sourcePartition == null) {
            p.sourcePartition = step.sourcePartition(topic, partition);
        }
        ProducerRecord<byte[], byte[]> out = step.shape(p.sourcePartition, topic, offset, p.log.remoteTopic, partition,
                                                        timestamp, key, value, raw, provenanceValue);
        if (out == null) {
            p.log.dropped();
        }
        return out;
    }

    /** A record larger than its remote topic accepts: what was sent before it is acknowledged and reported first
     * (so no retry writes it again), then the task fails naming the record, the limit and the fix. */
    private void refuse(Partition p, long offset, int size) {
        String message = "record " + p.log.topic + "-" + p.log.partition + "@" + offset + " is " + size + " bytes, "
            + "larger than cluster '" + target + "' accepts in remote topic '" + p.log.remoteTopic
            + "' (max.message.bytes = " + p.messageLimit + "). Raise that topic's max.message.bytes (config sync "
            + "copies the source topic's, unless config.properties.exclude names it); nothing of the partition from "
            + "this record on is written until then";
        if (transactionalId == null) {
            try {
                producer.flush();
            } catch (RuntimeException e) {  // interrupted: what was not acknowledged is read again
                fail(message);
            }
            reportAcknowledged();
        }
        throw new RecordPathException(message);
    }

    /** Fail before writing when the source topic is not the one the query was planned with (re-created). */
    private void checkTopicId(String topic) {
        String planned = sourceTopicIds.get(topic);
        if (planned == null || sourceAdmin == null) {
            return;
        }
        String now = SourceTopics.of(sourceAdmin).idOf(topic);
        if (now != null && !now.isEmpty() && !now.equals(planned)) {
            throw new RecordPathException("source topic '" + topic + "' was deleted and re-created (topic id "
                + planned + ", now " + now + "): its records are not written at the old positions; the flow "
                + "restarts it from its start");
        }
    }

    @Override
    public void close(Throwable errorOrNull) {
        try {
            closeTask(errorOrNull);
        } catch (RecordPathException e) {
            said(e);
            throw e;
        }
        said(errorOrNull);
    }

    /** One line per failed task for the record path's own failures (Spark's lines about them are dropped by
     * {@link QuietFailures}); the stack at DEBUG. */
    private void said(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RecordPathException) {
                LOG.warn("flow task failed: {}", t.getMessage());
                LOG.debug("record path failure", error);
                return;
            }
        }
    }

    private void closeTask(Throwable errorOrNull) {
        if (step != null) {
            step.close();
        }
        try {
            if (producer == null) {
                return;
            }
            if (transactionalId != null) {
                endTransaction(errorOrNull);
                return;
            }
            if (errorOrNull == null && !stopped) {
                try {
                    producer.flush();
                } catch (RuntimeException e) {  // interrupted: the query is being stopped
                    fail("the task was interrupted while waiting for acknowledgements: " + e);
                }
            }
            reportAcknowledged();
            if (error != null) {
                Producers.discard(producerConfig, slot, producer);
                throw new RecordPathException(error);
            }
            if (errorOrNull == null && !stopped) {
                for (Partition p : partitions.values()) {
                    if (!p.log.allAcked()) {
                        throw new RecordPathException("records of " + p.log.topic + "-" + p.log.partition
                            + " were not acknowledged by cluster '" + target + "'; is it reachable?");
                    }
                }
            }
        } finally {
            if (channel != null) {
                channel.closed(this);
            }
        }
    }

    /** Commit what the task wrote with its partitions' next offsets, then report it; abort on any failure or
     * stop (the records are read again, and no consumer reading committed records saw them). */
    private void endTransaction(Throwable errorOrNull) {
        if (errorOrNull == null && !stopped && error == null) {
            try {
                producer.flush();
                if (error == null && allAcknowledged()) {
                    Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                    for (Partition p : partitions.values()) {
                        if (p.log.seenNext() > p.committedNext) {
                            next.put(new TopicPartition(p.log.remoteTopic, p.log.partition), new OffsetAndMetadata(
                                p.log.seenNext(), sourceTopicIds.getOrDefault(p.log.topic, "")));
                        }
                    }
                    if (!next.isEmpty()) {
                        producer.sendOffsetsToTransaction(next, new ConsumerGroupMetadata(positionsGroup));
                    }
                    producer.commitTransaction();
                    mayReport = true;
                    reportAcknowledged();
                    return;
                }
            } catch (RuntimeException e) {
                fail("committing transactional id '" + transactionalId + "' on cluster '" + target + "' failed: "
                    + e.getMessage() + " (" + e.getClass().getSimpleName() + ")");
            }
        }
        try {
            producer.abortTransaction();
        } catch (RuntimeException e) {  // fenced or failed: the next attempt's initTransactions() aborts it
            Transactions.discard(transactionalId, producer);
        }
        if (error != null && errorOrNull == null && !stopped) {
            throw new RecordPathException(error);
        }
    }

    /** Report the acknowledged records not reported yet (from the reporter, the closer and close()). */
    void reportAcknowledged() {
        if (partitions == null || channel == null || !mayReport) {
            return;
        }
        synchronized (reportLock) {  // one report at a time, so a partition's summaries queue in order
            List<Map<String, Object>> out = new ArrayList<>();
            for (Partition p : partitions.values()) {
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

    /** Write no more records; the one being sent, if any, is sent first. */
    void stopWriting() {
        synchronized (this) {
            stopped = true;
        }
    }

    boolean allAcknowledged() {
        for (Partition p : partitions.values()) {
            if (!p.log.allAcked()) {
                return false;
            }
        }
        return true;
    }

    void awaitAcknowledged(long timeoutMs) {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (!allAcknowledged() && error == null && System.currentTimeMillis() < deadline) {
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    void fail(String message) {
        if (error == null) {
            error = message;
        }
    }

    private String hint(Exception e) {
        if (e instanceof RecordTooLargeException) {
            return " The record is larger than cluster '" + target + "' accepts: raise the remote topic's "
                + "max.message.bytes (or the broker's message.max.bytes) and '" + target
                + ".producer.max.request.size'.";
        }
        if (e instanceof TopicAuthorizationException || e instanceof ClusterAuthorizationException) {
            return " Grant WRITE on the remote topic to the principal used for cluster '" + target + "'.";
        }
        if (e instanceof TimeoutException) {
            return " Cluster '" + target + "' did not acknowledge in time: is it reachable?";
        }
        return "";
    }

    /** One source partition of this task: its log and the acknowledgement callback of its records. */
    private final class Partition implements Callback {
        final PartitionLog log;

        final long committedNext;  // exactly once: records below it are on the target already; else -1
        final long writtenNext;  // records below it are on the target: committed, or reported by an earlier attempt
        final int messageLimit;  // the remote topic's max.message.bytes
        long topicCheckedAt = Long.MIN_VALUE / 2;  // when the source topic's id was last compared
        Map<String, Object> sourcePartition;  // MM2's source partition map, for transforms

        Partition(String topic, int partition) {
            String remote = remoteTopics.get(topic);
            if (remote == null) {
                throw new RecordPathException("no remote topic planned for source topic '" + topic + "'");
            }
            this.log = new PartitionLog(topic, partition, remote);
            this.committedNext = committed == null ? -1L : committedNext(topic, new TopicPartition(remote, partition));
            this.writtenNext = Math.max(committedNext, channel.reportedNext(topic, partition));
            this.messageLimit = messageLimits.getOrDefault(remote, Integer.MAX_VALUE);
        }

        /** The next source offset committed for the partition, -1 for none; a position committed for an earlier
         * topic of the same name (its id, kept as the offset's metadata, differs) does not count. */
        private long committedNext(String topic, TopicPartition remote) {
            OffsetAndMetadata known;
            try {
                known = committed.containsKey(remote) ? committed.get(remote)
                    : Transactions.committedOf(targetAdmin, positionsGroup, remote);
            } catch (Exception e) {
                throw new RecordPathException("reading the committed position of " + remote + " on cluster '"
                    + target + "' failed: " + e.getMessage() + " (" + e.getClass().getSimpleName() + ")");
            }
            if (known == null) {
                return -1L;
            }
            String planned = sourceTopicIds.get(topic);
            String was = known.metadata();
            boolean sameTopic = planned == null || planned.isEmpty() || was == null || was.isEmpty() || was.equals(planned);
            return sameTopic ? known.offset() : -1L;
        }

        @Override
        public void onCompletion(RecordMetadata metadata, Exception exception) {
            if (exception == null) {
                int valueBytes = Math.max(metadata.serializedValueSize(), 0);
                log.acked(metadata.offset(), Math.max(metadata.serializedKeySize(), 0) + valueBytes, valueBytes,
                          System.currentTimeMillis());
                return;
            }
            // Called inside send() (the task thread holds the writer's lock) for a record refused at once;
            // otherwise, from the I/O thread, for the oldest record not acknowledged yet.
            boolean refusedAtOnce = Thread.holdsLock(MirrorWriter.this);
            long upstream = refusedAtOnce ? sending : log.upstreamAt(log.ackedCount());
            fail("writing " + log.topic + "-" + log.partition + "@" + upstream
                + " to cluster '" + target + "' topic '" + log.remoteTopic + "' failed: " + exception.getMessage()
                + " (" + exception.getClass().getSimpleName() + ")." + hint(exception));
            if (!refusedAtOnce && transactionalId == null) {  // a transaction is aborted whole instead
                // The target refused a batch: the producer would go on to send the partition's later batches,
                // and the retry would then put the refused record after them. Closed from its own I/O thread,
                // it sends nothing more (its pending batches fail, their records are read again).
                Producers.discard(producerConfig, slot, producer);
            }
        }
    }
}
