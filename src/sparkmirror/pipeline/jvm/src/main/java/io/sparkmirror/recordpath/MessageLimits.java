package io.sparkmirror.recordpath;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.record.CompressionType;

/**
 * Each remote topic's max.message.bytes, which every record is held to before it is sent: the producer checks only
 * max.request.size (the largest topic's limit), and a record the broker then refuses would fail the task after
 * later records of its partition were sent.
 */
final class MessageLimits {
    private final Map<String, Integer> limits;
    private final CompressionType compression;

    /** {@code compressionType}: the producer's compression.type, which the size of a record's batch depends on. */
    MessageLimits(Map<String, Integer> limits, String compressionType) {
        this.limits = limits;
        this.compression = CompressionType.forName(compressionType);
    }

    /** The remote topic's max.message.bytes; no limit when the driver gave none. */
    int of(String remoteTopic) {
        return limits.getOrDefault(remoteTopic, Integer.MAX_VALUE);
    }

    /** What is compared with the limit: {@link RecordSize#upperBound} with the producer's compression. */
    int sizeOf(ProducerRecord<byte[], byte[]> record) {
        return RecordSize.upperBound(record, compression);
    }

    /** Why a record over its remote topic's limit is not written, and the fix. */
    static String refusal(PartitionLog log, long offset, int size, int limit, String target) {
        return "record " + log.topic + "-" + log.partition + "@" + offset + " is " + size + " bytes, "
            + "larger than cluster '" + target + "' accepts in remote topic '" + log.remoteTopic
            + "' (max.message.bytes = " + limit + "). Raise that topic's max.message.bytes (config sync "
            + "copies the source topic's, unless config.properties.exclude names it); nothing of the partition from "
            + "this record on is written until then";
    }
}
