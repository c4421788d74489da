package io.sparkmirror.recordpath;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;

/**
 * The record path's sink: each source record becomes one producer record on the target with the same key,
 * value, headers (in order), timestamp and partition, in the JVM, with no Python call per record.
 *
 * <p>Rows are {@link SourceRow}s; each goes through the task's steps in order: its {@link TaskPartition}, the
 * source topic's id ({@link SourceTopics}), the SQL filter, the {@link TargetRecords} it becomes, its topic's
 * {@link MessageLimits}, the send. Each record's target offset comes from its acknowledgement (acks=all,
 * idempotent, so a partition's acknowledgements arrive in send order); acknowledged records are reported to the
 * flow's {@link ReportChannel} as exact offset syncs and the partition's next upstream offset, which is what
 * moves the flow's positions. A record is never reported before the target acknowledged it, so nothing is
 * skipped; a failed send fails the task. While the query's {@link Lease} is expired the writer sends nothing: it
 * waits, its lock released, for a renewal (then sends the same record) or a stop (then writes nothing more).
 *
 * <p>Exactly once (the spec's {@code exactly_once}): a task's records and the next source offset of each of its
 * partitions commit in one transaction on the target (see {@link Transactions}); records below the committed
 * offsets are skipped, and nothing is reported to the driver before the commit.
 */
public final class MirrorWriter extends ForeachWriter<Row> {
    private static final long serialVersionUID = 1L;
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MirrorWriter.class);

    private final WriterSpec spec;
    private transient ReportChannel channel;
    private transient TargetRecords records;
    private transient MessageLimits limits;
    private transient KafkaProducer<byte[], byte[]> producer;
    private transient int slot;
    private transient TaskPartitions partitions;
    private transient TaskPartition last;  // rows come partition by partition
    transient volatile boolean stopped;  // read by the task's transaction too
    transient volatile String error;  // why the task fails
    private transient long sending;  // the record in send(): the producer reports a refusal during the call
    private transient TaskTransaction transaction;  // this task's, when exactly once
    private transient volatile boolean mayReport;  // exactly once: only once the transaction is committed

    /** {@code spec}: the flow's writer spec, JSON (see {@link WriterSpec}). */
    public MirrorWriter(String spec) throws Exception {
        this.spec = new WriterSpec(spec);
    }

    @Override
    public boolean open(long partitionId, long epochId) {
        QuietFailures.install();
        partitions = new TaskPartitions();
        channel = ReportChannel.forWriter(spec.channelId, spec.driver, spec.reportIntervalMs);
        if (channel == null || channel.isClosed()) {
            return false;  // the query is being stopped: these records are read again by the next one
        }
        synchronized (this) {  // before any producer: a transactional one would fence the flow's new owner
            if (channel.leaseExpired() && !awaitLease("before its task starts")) {
                return false;
            }
        }
        Provenance stamp = spec.provenance == null ? null
            : new Provenance(spec.provenance.get("source"), spec.provenance.get("target"));
        records = new TargetRecords(stamp, spec.transforms == null ? null : TransformStep.of(spec.transforms),
                                    spec.newSchemaIds());
        limits = new MessageLimits(spec.messageLimits, spec.producerConfig.getOrDefault("compression.type", "none"));
        if (spec.transactionalPrefix == null) {
            slot = (int) (partitionId % spec.producerSlots);
            producer = Producers.get(spec.producerConfig, slot);
            mayReport = true;
        } else {
            mayReport = false;
            transaction = TaskTransaction.begin(spec, spec.transactionalPrefix + "-" + partitionId);
            producer = transaction.producer;
        }
        channel.opened(this);
        return true;
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
            String topic = SourceRow.topic(row);
            int partition = SourceRow.partition(row);
            long offset = SourceRow.offset(row);
            TaskPartition p = last;
            if (p == null || p.log.partition != partition || !p.log.topic.equals(topic)) {
                p = last = partitions.of(topic, partition, this::newPartition);
            }
            long now = System.currentTimeMillis();
            if (offset < p.writtenNext) {
                if (!p.skipChecked) {
                    // A retried task reads its range again from its start; if the topic was re-created meanwhile
                    // these are the new topic's records, not the written ones: the cluster is asked, not the cache.
                    SourceTopics.checkNow(spec.sourceAdmin, spec.sourceTopicIds, topic);
                    p.skipChecked = true;
                    p.topicCheckedAt = now;
                    SkipAhead.written(topic, partition, p.writtenNext);  // its reader seeks past them
                }
                p.log.skipped(offset);  // written by an earlier attempt of this task (committed, or reported)
                return;
            }
            if (now - p.topicCheckedAt >= SourceTopics.FRESH_MS) {
                SourceTopics.check(spec.sourceAdmin, spec.sourceTopicIds, topic);
                p.topicCheckedAt = now;
            }
            if (spec.filtered && !SourceRow.kept(row)) {
                p.log.dropped();
                p.log.skipped(offset);
                return;
            }
            byte[] key = SourceRow.key(row);
            byte[] value = SourceRow.value(row);
            long timestamp = SourceRow.timestamp(row);
            ProducerRecord<byte[], byte[]> record = records.of(row, p, topic, offset, partition, timestamp, key, value);
            if (record == null) {
                p.log.skipped(offset);
                return;
            }
            if (record == TransformStep.FAILED) {
                p.log.failed(offset);
                return;
            }
            int size = limits.sizeOf(record);
            if (size > p.messageLimit) {
                refuse(p, offset, size);
            }
            if (channel.leaseExpired()) {
                if (!awaitLease("before " + p.log.topic + "-" + partition + "@" + offset)) {
                    return;  // stopped meanwhile: not counted in any position, the next query reads it again
                }
                now = System.currentTimeMillis();
            }
            p.log.sent(offset, timestamp, now);
            sending = offset;
            producer.send(record, p);
        }
    }

    /** With the writer's lock held: wait (releasing it) until the lease is renewed, true, or the writer stops or
     * its channel closes, false. A failure reported meanwhile fails the task. */
    private boolean awaitLease(String where) {
        long since = System.nanoTime();
        LOG.warn("flow writer of query {} waits {}: its lease expired (the driver stopped renewing it), so it sends "
                 + "nothing until it is renewed", spec.channelId, where);
        boolean renewed = channel.lease.await(this, () -> stopped || error != null || channel.isClosed());
        if (error != null) {
            throw new RecordPathException(error);
        }
        if (!renewed || stopped || channel.isClosed()) {  // interrupted too: the task is being killed
            stopped = true;
            return false;
        }
        LOG.info("flow writer of query {} resumes: its lease was renewed after {} ms", spec.channelId,
                 (System.nanoTime() - since) / 1_000_000);
        return true;
    }

    private TaskPartition newPartition(String topic, int partition) {
        String remote = spec.remoteTopic(topic);
        long committedNext = transaction == null ? -1L
            : transaction.committedNext(topic, new TopicPartition(remote, partition));
        return new TaskPartition(this, new PartitionLog(topic, partition, remote), committedNext,
                                 channel.reportedNext(topic, partition), limits.of(remote));
    }

    /** A record larger than its remote topic accepts: what was sent before it is acknowledged and reported first
     * (so no retry writes it again), then the task fails naming the record, the limit and the fix. */
    private void refuse(TaskPartition p, long offset, int size) {
        String message = MessageLimits.refusal(p.log, offset, size, p.messageLimit, spec.target);
        if (transaction == null) {
            try {
                producer.flush();
            } catch (RuntimeException e) {  // interrupted: what was not acknowledged is read again
                fail(message);
            }
            reportAcknowledged();
        }
        throw new RecordPathException(message);
    }

    /** The target refused a record of {@code log}: the task fails (from the partition's callback). */
    void refused(PartitionLog log, Exception exception) {
        // Called inside send() (the task thread holds the writer's lock) for a record refused at once;
        // otherwise, from the I/O thread, for the oldest record not acknowledged yet.
        boolean refusedAtOnce = Thread.holdsLock(this);
        long upstream = refusedAtOnce ? sending : log.upstreamAt(log.ackedCount());
        fail(SendFailure.message(log, upstream, spec.target, exception));
        if (!refusedAtOnce && transaction == null) {  // a transaction is aborted whole instead
            // The target refused a batch: the producer would go on to send the partition's later batches,
            // and the retry would then put the refused record after them. Closed from its own I/O thread,
            // it sends nothing more (its pending batches fail, their records are read again).
            Producers.discard(spec.producerConfig, slot, producer);
        }
    }

    @Override
    public void close(Throwable errorOrNull) {
        SkipAhead.clear();  // what its reader did not take (Spark's Kafka source takes none)
        try {
            closeTask(errorOrNull);
        } catch (RecordPathException e) {
            QuietFailures.say(e);
            throw e;
        }
        QuietFailures.say(errorOrNull);
    }

    private void closeTask(Throwable errorOrNull) {
        if (records != null) {
            records.close();
        }
        try {
            if (producer == null) {
                return;
            }
            if (transaction != null) {
                transaction.end(this, errorOrNull, partitions);
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
                Producers.discard(spec.producerConfig, slot, producer);
                throw new RecordPathException(error);
            }
            if (errorOrNull == null && !stopped) {
                partitions.requireAcknowledged(spec.target);
            }
        } finally {
            if (channel != null) {
                channel.closed(this);
            }
        }
    }

    /** Exactly once: the transaction committed, what it wrote may be reported now. */
    void committed() {
        mayReport = true;
        reportAcknowledged();
    }

    /** Report the acknowledged records not reported yet (from the reporter, the closer and close()). */
    void reportAcknowledged() {
        if (partitions == null || channel == null || !mayReport) {
            return;
        }
        partitions.report(channel);
    }

    /** Write no more records; the one being sent, if any, is sent first (one waiting for its lease is not). */
    void stopWriting() {
        synchronized (this) {
            stopped = true;
            notifyAll();
        }
    }

    boolean allAcknowledged() {
        return partitions.allAcknowledged();
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
}
