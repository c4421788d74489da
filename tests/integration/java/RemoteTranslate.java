import java.time.Duration;
import java.util.Comparator;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * MM2's own offset translation, for interop tests: prints what RemoteClusterUtils.translateOffsets
 * reads from {@code <remoteClusterAlias>.checkpoints.internal} on the cluster at {@code bootstrap},
 * one {@code topic<TAB>partition<TAB>offset} line per remote topic-partition, sorted.
 *
 * <p>Usage: {@code RemoteTranslate <bootstrap> <remoteClusterAlias> <group> [replication.policy.class]} (a
 * policy class of the caller's must be on the classpath).
 */
public final class RemoteTranslate {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private RemoteTranslate() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3 && args.length != 4) {
            System.err.println("usage: RemoteTranslate <bootstrap> <remoteClusterAlias> <group> [policy class]");
            System.exit(2);
        }
        Map<String, Object> properties = args.length == 3 ? Map.of("bootstrap.servers", args[0])
                : Map.of("bootstrap.servers", args[0], "replication.policy.class", args[3]);
        Map<TopicPartition, OffsetAndMetadata> offsets =
                RemoteClusterUtils.translateOffsets(properties, args[1], args[2], TIMEOUT);
        offsets.entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<TopicPartition, OffsetAndMetadata> e) -> e.getKey().topic())
                        .thenComparingInt(e -> e.getKey().partition()))
                .forEach(e -> System.out.println(
                        e.getKey().topic() + "\t" + e.getKey().partition() + "\t" + e.getValue().offset()));
    }
}
