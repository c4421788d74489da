package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Test;

class TransactionsTest {
    static final String TOPIC_ID = "R_KOrdgvR7yUo-BTige3jQ";

    @Test
    void aPositionCommittedFromPythonKeepsItsTopicId() {
        // librdkafka through confluent-kafka commits the metadata with its C string's NUL
        assertEquals(TOPIC_ID, Transactions.topicIdOf(new OffsetAndMetadata(7, TOPIC_ID + "\0")));
        assertEquals(TOPIC_ID, Transactions.topicIdOf(new OffsetAndMetadata(7, TOPIC_ID)));
    }

    @Test
    void aPositionWithoutMetadataHasNoTopicId() {
        assertEquals("", Transactions.topicIdOf(new OffsetAndMetadata(7)));
        assertEquals("", Transactions.topicIdOf(new OffsetAndMetadata(7, "\0")));
    }
}
