package io.sparkmirror.recordpath;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.spark.sql.Row;

/**
 * The chain on Connect's objects, for any chain: the record in MM2's shape (ConnectShape) through the
 * TransformChain, and what it returned back to bytes as MM2's ByteArrayConverter writes them. A record may not
 * leave its remote topic or partition: checkpoints and offset translation follow records by those.
 */
final class ConnectRowChain implements RowChain {
    private final TransformChain chain;

    ConnectRowChain(TransformChain chain) {
        this.chain = chain;
    }

    @Override
    public ProducerRecord<byte[], byte[]> apply(Map<String, Object> sourcePartition, String topic, long offset,
                                                String remoteTopic, int partition, long timestamp, byte[] key,
                                                byte[] value, List<Row> headers, byte[] provenance)
            throws TransformChain.StageFailure {
        SourceRecord out = chain.apply(ConnectShape.in(sourcePartition, offset, remoteTopic, partition, timestamp, key,
                                                       value, headers));
        if (out == null) {
            return null;
        }
        byte[] outKey = ConnectShape.key(out);
        byte[] outValue = ConnectShape.value(out);
        List<Header> outHeaders = ConnectShape.headers(out);
        if (!remoteTopic.equals(out.topic()) || out.kafkaPartition() == null || out.kafkaPartition() != partition) {
            throw new RecordPathException("a transform moved record " + topic + "-" + partition + "@" + offset
                + " to topic '" + out.topic() + "' partition " + out.kafkaPartition() + ": sparkmirror writes each "
                + "record to its remote topic '" + remoteTopic + "' and partition " + partition + ", where offset "
                + "syncs and checkpoints can follow it. Remove the transform; name remote topics with "
                + "replication.policy.class instead");
        }
        return RowChain.written(remoteTopic, partition, out.timestamp(), outKey, outValue, outHeaders, provenance);
    }

    @Override
    public void close() {
        chain.close();
    }
}
