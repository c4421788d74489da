package io.sparkmirror.recordpath;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;

/** A record's size as the producer bounds it when it checks max.request.size: the size of a batch of that record
 * alone, which is what a topic's max.message.bytes is compared with when the record is too large to share one. */
final class RecordSize {
    private RecordSize() {
    }

    static int upperBound(ProducerRecord<byte[], byte[]> record, CompressionType compression) {
        Header[] headers = record.headers().toArray();
        return AbstractRecords.estimateSizeInBytesUpperBound(RecordBatch.CURRENT_MAGIC_VALUE, compression,
                                                             record.key(), record.value(), headers);
    }
}
