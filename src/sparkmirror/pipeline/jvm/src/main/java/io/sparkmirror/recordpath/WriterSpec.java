package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * What the driver tells every task of a flow's query (pipeline/flow.py's writer spec), read once in the driver and
 * shipped with the {@link MirrorWriter} to the executors: hence serializable, of plain maps.
 */
final class WriterSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    final String channelId;
    final String target;
    final HashMap<String, String> producerConfig;
    final HashMap<String, String> remoteTopics;
    final HashMap<String, String> provenance;  // source, target; null: no provenance header
    final HashMap<String, Object> transforms;  // MM2's transforms (TransformStep.of); null: none
    final HashMap<String, Integer> messageLimits;  // remote topic -> its max.message.bytes
    final boolean filtered;  // a SQL filter's verdict is column 7 ("keep")
    final int producerSlots;
    final HashMap<String, String> sourceAdmin;  // Java admin settings of the source cluster
    final HashMap<String, String> sourceTopicIds;  // topic -> the id the query was planned with
    // schema id rewrite: source_url, source_user_info, target_url, target_user_info, unknown_ids, exempt_topics (comma
    // list); null: ids kept
    final HashMap<String, String> schemaIds;

    final HashMap<String, Object> driver;  // the driver's channel endpoint; null in local mode
    final String transactionalPrefix;  // null: at least once
    final String positionsGroup;  // the target's group holding the committed positions
    final HashMap<String, String> targetAdmin;  // Java admin settings of the target
    final long reportIntervalMs;

    /** {@code spec}: JSON with channel, target, producer (Java client settings), producer_slots (producers
     * per configuration, the flow's tasks.max), remote_topics, provenance, and on a cluster driver (the
     * endpoint of the driver's {@link ChannelServer}) and report_interval_ms. */
    WriterSpec(String spec) throws Exception {
        Map<String, Object> s = new ObjectMapper().readValue(spec, new TypeReference<Map<String, Object>>() { });
        this.channelId = (String) s.get("channel");
        this.target = (String) s.get("target");
        this.producerConfig = strings(s.get("producer"));
        this.remoteTopics = strings(s.get("remote_topics"));
        this.producerSlots = Math.max(1, ((Number) s.get("producer_slots")).intValue());
        this.sourceAdmin = s.get("source_admin") == null ? null : strings(s.get("source_admin"));
        this.sourceTopicIds = s.get("source_topic_ids") == null ? new HashMap<>() : strings(s.get("source_topic_ids"));
        @SuppressWarnings("unchecked")
        Map<String, Object> endpoint = (Map<String, Object>) s.get("driver");
        this.driver = endpoint == null ? null : new HashMap<>(endpoint);
        this.reportIntervalMs = s.get("report_interval_ms") == null ? 0L : ((Number) s.get("report_interval_ms")).longValue();
        this.provenance = s.get("provenance") == null ? null : strings(s.get("provenance"));
        @SuppressWarnings("unchecked")
        Map<String, Object> chain = (Map<String, Object>) s.get("transforms");
        this.transforms = chain == null ? null : new HashMap<>(chain);
        this.filtered = Boolean.TRUE.equals(s.get("filtered"));
        this.schemaIds = s.get("schema_ids") == null ? null : strings(s.get("schema_ids"));
        this.messageLimits = new HashMap<>();
        if (s.get("message_limits") != null) {
            strings(s.get("message_limits")).forEach((topic, limit) -> messageLimits.put(topic, Integer.parseInt(limit)));
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> once = (Map<String, Object>) s.get("exactly_once");
        this.transactionalPrefix = once == null ? null : (String) once.get("transactional_id");
        this.positionsGroup = once == null ? null : (String) once.get("positions_group");
        this.targetAdmin = once == null ? null : strings(once.get("admin"));
    }

    /** The schema id rewrite of each task, or null when the flow keeps the ids. */
    SchemaIds newSchemaIds() {
        return schemaIds(schemaIds);
    }

    /** The rewrite a spec's schema_ids describe (source_url, source_user_info, target_url, ...); null for null. */
    static SchemaIds schemaIds(Map<String, String> spec) {
        if (spec == null) {
            return null;
        }
        SchemaResolver resolver = new SchemaResolver(
            new RegistryClient(spec.get("source_url"), spec.get("source_user_info")),
            new RegistryClient(spec.get("target_url"), spec.get("target_user_info")));
        String exempt = spec.getOrDefault("exempt_topics", "");
        return new SchemaIds(resolver, "pass".equals(spec.get("unknown_ids")),
                             exempt.isEmpty() ? java.util.Set.of() : java.util.Set.of(exempt.split(",")));
    }

    /** The remote topic the query planned for a source topic. */
    String remoteTopic(String topic) {
        String remote = remoteTopics.get(topic);
        if (remote == null) {
            throw new RecordPathException("no remote topic planned for source topic '" + topic + "'");
        }
        return remote;
    }

    @SuppressWarnings("unchecked")
    private static HashMap<String, String> strings(Object map) {
        HashMap<String, String> out = new HashMap<>();
        ((Map<String, Object>) map).forEach((k, v) -> out.put(k, String.valueOf(v)));
        return out;
    }
}
