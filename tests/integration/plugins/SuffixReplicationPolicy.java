package com.example.naming;

import java.util.Map;
import org.apache.kafka.common.Configurable;
import org.apache.kafka.connect.mirror.ReplicationPolicy;

/**
 * A company's naming scheme, for the tests: `orders` from cluster A is `orders--from-A` on the target (the marker
 * `from` is configurable as `acme.remote.marker`), heartbeats go to `acme.heartbeats.topic` (`acme-heartbeats` if
 * unset), offset syncs to `acme-offset-syncs-<alias>` and checkpoints to `acme-checkpoints-<alias>`. Nothing here is
 * MM2's default.
 */
public class SuffixReplicationPolicy implements ReplicationPolicy, Configurable {
    private String separator = "--from-";
    private String heartbeats = "acme-heartbeats";

    @Override
    public void configure(Map<String, ?> configs) {
        Object marker = configs.get("acme.remote.marker");
        if (marker != null) {
            separator = "--" + marker + "-";
        }
        Object topic = configs.get("acme.heartbeats.topic");
        if (topic != null) {
            heartbeats = topic.toString();
        }
    }

    @Override
    public String formatRemoteTopic(String sourceClusterAlias, String topic) {
        return topic + separator + sourceClusterAlias;
    }

    @Override
    public String topicSource(String topic) {
        int at = topic.lastIndexOf(separator);
        return at < 0 ? null : topic.substring(at + separator.length());
    }

    @Override
    public String upstreamTopic(String topic) {
        int at = topic.lastIndexOf(separator);
        return at < 0 ? null : topic.substring(0, at);
    }

    @Override
    public String heartbeatsTopic() {
        return heartbeats;
    }

    @Override
    public String offsetSyncsTopic(String clusterAlias) {
        return "acme-offset-syncs-" + clusterAlias;
    }

    @Override
    public String checkpointsTopic(String clusterAlias) {
        return "acme-checkpoints-" + clusterAlias;
    }

    @Override
    public boolean isCheckpointsTopic(String topic) {
        return topic.startsWith("acme-checkpoints-");
    }

    @Override
    public boolean isMM2InternalTopic(String topic) {
        return topic.startsWith("acme-offset-syncs-") || isCheckpointsTopic(topic);
    }
}
