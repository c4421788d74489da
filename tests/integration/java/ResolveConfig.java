// In MM2's package: the resolution methods compared here (connector configs, client configs, intervals) are
// package-private in connect-mirror, and the jar is not sealed.
package org.apache.kafka.connect.mirror;

import java.io.FileInputStream;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.policy.AllConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.runtime.isolation.Plugins;

/**
 * What MM2 4.3's dedicated mode resolves from a properties file, for the configuration parity test: per file
 * given, one JSON line with the cluster aliases, MM2's cluster pairs (its herders), and per ordered pair of
 * aliases the three connector configs MM2 builds (values as parsed by their ConfigDefs), the job intervals
 * they yield (negative: job off), whether heartbeats are emitted, and the clients MM2 builds.
 *
 * <p>The replication, heartbeat and checkpoint records are written by Connect's worker producer (the
 * connector's {@code producer.override.*} applied), so those producers come from Connect's own
 * {@code Worker.baseProducerConfigs}. MM2's client-id tag ({@code A->B|Connector|role}) is removed: it is a
 * label, not a setting. Password-typed values are replaced by {@link #HIDDEN}.
 *
 * <p>Usage: {@code ResolveConfig <mm2.properties>...} (run from the folder relative provider paths start in).
 */
public final class ResolveConfig {

    static final String HIDDEN = "[hidden]";
    private static final String CLIENT_ID = "client.id";
    private static final String PLUGIN_DISCOVERY = "plugin.discovery";
    private static final String SERVICE_LOAD = "service_load";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Plugins plugins;

    private ResolveConfig() {
    }

    public static void main(String[] args) throws Exception {
        for (String path : args) {
            Map<String, Object> out = new TreeMap<>();
            out.put("file", path);
            try {
                out.putAll(resolve(load(path)));
            } catch (Exception | LinkageError e) {
                out.put("error", e.toString());
            }
            System.out.println(JSON.writeValueAsString(out));
        }
    }

    private static Map<String, String> load(String path) throws Exception {
        Properties props = new Properties();
        try (InputStream in = new FileInputStream(path)) {
            props.load(in);
        }
        Map<String, String> map = new HashMap<>();
        props.stringPropertyNames().forEach(k -> map.put(k, props.getProperty(k)));
        return map;
    }

    private static Map<String, Object> resolve(Map<String, String> props) throws Exception {
        // Plugin discovery by service manifests (every class used here has one) instead of scanning the class
        // path: the same plugins, seconds faster per file. It is no setting of a connector or client.
        Map<String, String> withDiscovery = new HashMap<>(props);
        withDiscovery.putIfAbsent(PLUGIN_DISCOVERY, SERVICE_LOAD);
        MirrorMakerConfig config = new MirrorMakerConfig(withDiscovery);
        Map<String, Object> out = new TreeMap<>();
        out.put("clusters", new ArrayList<>(new TreeSet<>(config.clusters())));
        List<String> pairs = new ArrayList<>();
        config.clusterPairs().forEach(p -> pairs.add(p.toString()));
        pairs.sort(null);
        out.put("cluster_pairs", pairs);
        Map<String, Object> flows = new TreeMap<>();
        for (String source : config.clusters()) {
            for (String target : config.clusters()) {
                if (!source.equals(target)) {
                    SourceAndTarget pair = new SourceAndTarget(source, target);
                    flows.put(pair.toString(), flow(config, pair, pairs.contains(pair.toString())));
                }
            }
        }
        out.put("flows", flows);
        return out;
    }

    private static Map<String, Object> flow(MirrorMakerConfig config, SourceAndTarget pair, boolean herder)
            throws Exception {
        Map<String, String> sourceProps = connectorProps(config, pair, MirrorSourceConnector.class);
        Map<String, String> heartbeatProps = connectorProps(config, pair, MirrorHeartbeatConnector.class);
        Map<String, String> checkpointProps = connectorProps(config, pair, MirrorCheckpointConnector.class);
        MirrorSourceConfig source = new MirrorSourceConfig(sourceProps);
        MirrorHeartbeatConfig heartbeat = new MirrorHeartbeatConfig(heartbeatProps);
        MirrorCheckpointConfig checkpoint = new MirrorCheckpointConfig(checkpointProps);

        Map<String, Object> out = new TreeMap<>();
        out.put("enabled", source.enabled());
        out.put("source_connector", values(source.values()));
        out.put("heartbeat_connector", values(heartbeat.values()));
        out.put("checkpoint_connector", values(checkpoint.values()));

        Map<String, Object> intervals = new TreeMap<>();
        intervals.put("refresh.topics", millis(source.refreshTopicsInterval()));
        intervals.put("sync.topic.configs", millis(source.syncTopicConfigsInterval()));
        intervals.put("sync.topic.acls", millis(source.syncTopicAclsInterval()));
        intervals.put("emit.checkpoints", millis(checkpoint.emitCheckpointsInterval()));
        intervals.put("sync.group.offsets", millis(checkpoint.syncGroupOffsetsInterval()));
        intervals.put("refresh.groups", millis(checkpoint.refreshGroupsInterval()));
        intervals.put("emit.heartbeats", millis(heartbeat.emitHeartbeatsInterval()));
        intervals.put("consumer.poll.timeout", millis(source.consumerPollTimeout()));
        intervals.put("admin.timeout", millis(source.adminTimeout()));
        out.put("intervals_ms", intervals);
        // MirrorMaker starts a herder per cluster pair; its heartbeat connector makes a task unless the
        // interval is negative (emit.heartbeats.enabled = false, or a negative interval).
        out.put("in_cluster_pairs", herder);
        out.put("emits_heartbeats", herder && !heartbeat.emitHeartbeatsInterval().isNegative());

        Map<String, Object> clients = new TreeMap<>();
        clients.put("source_consumer", client(source, source.sourceConsumerConfig("replication-consumer")));
        clients.put("source_admin", client(source, source.sourceAdminConfig("replication-source-admin")));
        clients.put("target_admin", client(source, source.targetAdminConfig("replication-target-admin")));
        clients.put("offset_syncs_producer", client(source, source.offsetSyncsTopicProducerConfig()));
        clients.put("offset_syncs_consumer", client(checkpoint, checkpoint.offsetSyncsTopicConsumerConfig()));
        clients.put("target_consumer",
                client(checkpoint, checkpoint.targetConsumerConfig("checkpoints-target-consumer")));
        WorkerConfig worker = new DistributedConfig(config.workerConfig(pair));
        clients.put("target_producer", workerProducer(worker, sourceProps, MirrorSourceConnector.class));
        clients.put("heartbeats_producer", workerProducer(worker, heartbeatProps, MirrorHeartbeatConnector.class));
        clients.put("checkpoints_producer", workerProducer(worker, checkpointProps, MirrorCheckpointConnector.class));
        out.put("clients", clients);
        return out;
    }

    /** connectorBaseConfig with config providers resolved, as the Connect worker does before starting it. */
    private static Map<String, String> connectorProps(MirrorMakerConfig config, SourceAndTarget pair,
                                                      Class<?> connector) {
        return config.transform(config.connectorBaseConfig(pair, connector));
    }

    private static Object millis(Duration d) {
        return d.toMillis();
    }

    private static Map<String, Object> values(Map<String, ?> parsed) {
        Map<String, Object> out = new TreeMap<>();
        parsed.forEach((k, v) -> out.put(k, json(v)));
        return out;
    }

    private static Object json(Object v) {
        if (v instanceof Password) {
            return HIDDEN;
        } else if (v instanceof Class<?> c) {
            return c.getName();
        } else if (v instanceof List<?> list) {
            List<Object> items = new ArrayList<>();
            list.forEach(item -> items.add(json(item)));
            return items;
        } else if (v == null || v instanceof Boolean || v instanceof Number) {
            return v;
        }
        return v.toString();
    }

    /** A client's settings as strings, passwords hidden, MM2's client-id tag removed. */
    private static Map<String, Object> client(MirrorConnectorConfig connector, Map<String, Object> settings) {
        Map<String, Object> out = strings(settings);
        Object clientId = out.get(CLIENT_ID);
        if (clientId != null) {
            String id = clientId.toString();
            int tag = id.indexOf(connector.entityLabel());
            if (tag == 0) {
                out.remove(CLIENT_ID);
            } else if (tag > 0) {
                out.put(CLIENT_ID, id.substring(0, tag - 1));
            }
        }
        return out;
    }

    private static Map<String, Object> strings(Map<String, Object> settings) {
        Map<String, Object> out = new TreeMap<>();
        settings.forEach((k, v) -> out.put(k, isPassword(k) || v instanceof Password ? HIDDEN : String.valueOf(v)));
        return out;
    }

    private static boolean isPassword(String key) {
        for (ConfigDef def : List.of(ProducerConfig.configDef(), ConsumerConfig.configDef(),
                AdminClientConfig.configDef())) {
            ConfigDef.ConfigKey k = def.configKeys().get(key);
            if (k != null && k.type == ConfigDef.Type.PASSWORD) {
                return true;
            }
        }
        return false;
    }

    /** Connect's producer for a connector's tasks: Worker.baseProducerConfigs, with MM2's default policy All. */
    private static Map<String, Object> workerProducer(WorkerConfig worker, Map<String, String> connectorProps,
                                                      Class<? extends Connector> connector) throws Exception {
        if (plugins == null) {
            plugins = new Plugins(Map.of(PLUGIN_DISCOVERY, SERVICE_LOAD));
        }
        ConnectorConfig connectorConfig = new SourceConnectorConfig(plugins, connectorProps, false);
        Method base = Worker.class.getDeclaredMethod("baseProducerConfigs", String.class, String.class,
                WorkerConfig.class, ConnectorConfig.class, Class.class,
                ConnectorClientConfigOverridePolicy.class, String.class);
        base.setAccessible(true);
        String name = connector.getSimpleName();
        @SuppressWarnings("unchecked")
        Map<String, Object> settings = (Map<String, Object>) base.invoke(null, name,
                "connector-producer-" + name + "-0", worker, connectorConfig, connector,
                new AllConnectorClientConfigOverridePolicy(), "cluster-id");
        return strings(settings);
    }
}
