package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;

class SendFailureTest {
    private static final PartitionLog LOG = new PartitionLog("t", 3, "A.t");
    private static final String WHAT = "writing t-3@42 to cluster 'B' topic 'A.t' failed: ";

    private static String message(Exception e) {
        return SendFailure.message(LOG, 42L, "B", e);
    }

    @Test
    void aRecordTooLargeSaysWhichLimitsToRaise() {
        assertEquals(WHAT + "big (RecordTooLargeException). The record is larger than cluster 'B' accepts: raise the "
            + "remote topic's max.message.bytes (or the broker's message.max.bytes) and 'B.producer.max.request.size'.",
            message(new RecordTooLargeException("big")));
    }

    @Test
    void aRefusedWriteSaysWhatToGrant() {
        String grant = " Grant WRITE on the remote topic to the principal used for cluster 'B'.";
        assertEquals(WHAT + "no (TopicAuthorizationException)." + grant,
                     message(new TopicAuthorizationException("no")));
        assertEquals(WHAT + "no (ClusterAuthorizationException)." + grant,
                     message(new ClusterAuthorizationException("no")));
    }

    @Test
    void aTimeoutAsksWhetherTheTargetIsReachable() {
        assertEquals(WHAT + "late (TimeoutException). Cluster 'B' did not acknowledge in time: is it reachable?",
                     message(new TimeoutException("late")));
    }

    @Test
    void otherErrorsAreNamedOnly() {
        assertEquals(WHAT + "moved (NotLeaderOrFollowerException).",
                     message(new NotLeaderOrFollowerException("moved")));
    }
}
