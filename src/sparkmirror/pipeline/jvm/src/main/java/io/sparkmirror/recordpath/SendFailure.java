package io.sparkmirror.recordpath;

import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TopicAuthorizationException;

/** What the task fails with when the target refused a record: the record, where it went, the producer's error and,
 * for the errors an operator can fix, how. */
final class SendFailure {
    private SendFailure() {
    }

    /** {@code upstream}: the refused record's source offset. */
    static String message(PartitionLog log, long upstream, String target, Exception exception) {
        return "writing " + log.topic + "-" + log.partition + "@" + upstream
            + " to cluster '" + target + "' topic '" + log.remoteTopic + "' failed: " + exception.getMessage()
            + " (" + exception.getClass().getSimpleName() + ")." + hint(exception, target);
    }

    private static String hint(Exception e, String target) {
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
}
