package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.LeaseTest.DONE_MS;
import static io.sparkmirror.recordpath.LeaseTest.WAITING_MS;
import static io.sparkmirror.recordpath.LeaseTest.eventually;
import static io.sparkmirror.recordpath.LeaseTest.waitsForLease;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A writer of a query with a lease, in the driver's JVM (local mode): while the lease is expired it hands the
 * producer nothing. No broker: an interceptor notes what the writer hands the producer (a send then fails for
 * want of metadata, which names the record).
 */
class MirrorWriterLeaseTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final String channelId = "lease-" + UUID.randomUUID();
    private final FlowChannel channel = FlowChannel.create(channelId, 0, 60_000);

    /** Values of the records handed to a producer, as its interceptor sees them. */
    public static final class Sent implements ProducerInterceptor<byte[], byte[]> {
        static final List<String> VALUES = new CopyOnWriteArrayList<>();

        @Override
        public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
            VALUES.add(Rows.text(record.value()));
            return record;
        }

        @Override
        public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
        }

        @Override
        public void close() {
        }

        @Override
        public void configure(Map<String, ?> configs) {
        }
    }

    @AfterEach
    void release() {
        channel.release();
    }

    private MirrorWriter writer() throws Exception {
        Map<String, Object> spec = new HashMap<>();
        spec.put("channel", channelId);
        spec.put("target", "B");
        spec.put("producer", Map.of("bootstrap.servers", "localhost:1", "max.block.ms", "100",
                                    "interceptor.classes", Sent.class.getName()));
        spec.put("producer_slots", 1);
        spec.put("remote_topics", Map.of("t", "A.t"));
        spec.put("filtered", true);
        return new MirrorWriter(JSON.writeValueAsString(spec));
    }

    private String value(long offset) {
        return channelId + "@" + offset;
    }

    /** A record the SQL filter keeps (sent) or drops (not sent, its offset still passed). */
    private Row row(long offset, boolean keep) {
        return RowFactory.create("t", 0, offset, 0L, null, Rows.bytes(value(offset)), Rows.headers(), keep);
    }

    private List<String> sent() {
        List<String> out = new ArrayList<>();
        for (String v : Sent.VALUES) {
            if (v.startsWith(channelId)) {
                out.add(v);
            }
        }
        return out;
    }

    private static Thread task(Runnable work, AtomicReference<Throwable> failure) {
        Thread t = new Thread(() -> {
            try {
                work.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        return t;
    }

    @Test
    void anExpiredLeaseHoldsTheRecordUntilARenewalThenSendsThatSameRecord() throws Exception {
        MirrorWriter writer = writer();
        assertTrue(writer.open(0, 0));
        writer.process(row(0, false));
        channel.renew(0);
        assertTrue(channel.leaseExpired());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread processing = task(() -> writer.process(row(1, true)), failure);
        assertTrue(eventually(() -> waitsForLease(processing), DONE_MS), "the writer waits for its lease");
        processing.join(WAITING_MS);
        assertTrue(waitsForLease(processing), "and goes on waiting");
        assertEquals(List.of(), sent(), "nothing is sent on an expired lease");

        channel.renew(60_000);
        processing.join(DONE_MS);
        assertFalse(processing.isAlive());
        assertNull(failure.get());
        assertEquals(List.of(value(1)), sent(), "the record it waited with, once");
        RecordPathException end = assertThrows(RecordPathException.class, () -> writer.close(null));
        assertTrue(end.getMessage().startsWith("writing t-0@1 to cluster 'B' topic 'A.t' failed"), end.getMessage());
    }

    @Test
    void closingTheChannelEndsAWaitingWriterWithoutSendingAndItsRecordIsReadAgain() throws Exception {
        MirrorWriter writer = writer();
        assertTrue(writer.open(0, 0));
        writer.process(row(0, false));
        channel.renew(0);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread processing = task(() -> {
            writer.process(row(1, true));
            writer.process(row(2, true));  // after the stop: not even looked at
        }, failure);
        assertTrue(eventually(() -> waitsForLease(processing), DONE_MS));

        assertEquals(0, channel.close(DONE_MS));
        processing.join(DONE_MS);
        assertFalse(processing.isAlive(), "the stop ends the wait");
        assertNull(failure.get());
        writer.close(null);
        assertEquals(List.of(), sent());
        List<Map<String, Object>> reports = JSON.readValue(channel.drain(0),
                                                           new TypeReference<List<Map<String, Object>>>() { });
        assertEquals(1, reports.size());
        assertEquals(1, reports.get(0).get("next_upstream"), "the dropped record passed, the held one is read again");
        assertEquals(0, reports.get(0).get("records"));
    }

    @Test
    void aTaskOpenedOnAnExpiredLeaseStartsOnlyOnceRenewed() throws Exception {
        channel.renew(0);
        MirrorWriter writer = writer();
        AtomicReference<Boolean> opened = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread opening = task(() -> opened.set(writer.open(0, 0)), failure);
        assertTrue(eventually(() -> waitsForLease(opening), DONE_MS), "no producer before the lease is renewed");
        channel.renew(60_000);
        opening.join(DONE_MS);
        assertNull(failure.get());
        assertTrue(opened.get());
        writer.close(null);
    }

    @Test
    void aTaskWaitingToOpenWritesNothingWhenItsQueryGenerationIsReplaced() throws Exception {
        channel.renew(0);
        MirrorWriter writer = writer();
        AtomicReference<Boolean> opened = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread opening = task(() -> opened.set(writer.open(0, 0)), failure);
        assertTrue(eventually(() -> waitsForLease(opening), DONE_MS));
        FlowChannel successor = FlowChannel.create(channelId, 0, 60_000);  // the old generation is released
        try {
            opening.join(DONE_MS);
            assertFalse(opening.isAlive());
            assertNull(failure.get());
            assertFalse(opened.get());
        } finally {
            successor.release();
        }
    }

    @Test
    void withoutALeaseARenewalChangesNothing() throws Exception {
        FlowChannel unleased = FlowChannel.create("no-lease-" + UUID.randomUUID(), 0);
        try {
            unleased.renew(0);
            assertFalse(unleased.leaseExpired());
        } finally {
            unleased.release();
        }
    }
}
