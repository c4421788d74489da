package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.CompressionType;
import org.junit.jupiter.api.Test;

class MessageLimitsTest {
    private static ProducerRecord<byte[], byte[]> record(int valueBytes) {
        return new ProducerRecord<>("A.t", 0, 0L, bytes("k"), new byte[valueBytes],
                                    List.of(new RecordHeader("h", bytes("1"))));
    }

    @Test
    void aRecordIsMeasuredAsABatchOfItsOwn() {
        int empty = RecordSize.upperBound(record(0), CompressionType.NONE);
        assertTrue(empty > 61, "a batch's header alone is 61 bytes: " + empty);
        assertTrue(RecordSize.upperBound(record(1_000), CompressionType.NONE) >= empty + 1_000);
    }

    @Test
    void aTopicWithoutALimitTakesAnySize() {
        MessageLimits limits = new MessageLimits(Map.of("A.t", 1_000), "none");
        assertEquals(1_000, limits.of("A.t"));
        assertEquals(Integer.MAX_VALUE, limits.of("A.u"));
    }

    @Test
    void theSizeIsTheProducersBoundWithItsCompression() {
        ProducerRecord<byte[], byte[]> record = record(500);
        assertEquals(RecordSize.upperBound(record, CompressionType.LZ4),
                     new MessageLimits(Map.of(), "lz4").sizeOf(record));
    }

    @Test
    void anUnknownCompressionIsRefusedWhenTheTaskOpens() {
        assertThrows(IllegalArgumentException.class, () -> new MessageLimits(Map.of(), "brotli"));
    }

    @Test
    void theRefusalNamesTheRecordTheLimitAndTheFix() {
        assertEquals("record t-3@42 is 2000 bytes, larger than cluster 'B' accepts in remote topic 'A.t' "
            + "(max.message.bytes = 1000). Raise that topic's max.message.bytes (config sync copies the source "
            + "topic's, unless config.properties.exclude names it); nothing of the partition from this record on is "
            + "written until then", MessageLimits.refusal(new PartitionLog("t", 3, "A.t"), 42L, 2_000, 1_000, "B"));
    }
}
