package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * Which chains run on the bytes (NativeRowChain): those whose every stage is Connect's own DropHeaders or Filter,
 * with no predicate or Connect's own HasHeaderKey, RecordIsTombstone or TopicNameMatches. A class counts only as
 * the very class this JVM's classpath holds (not a subclass, nor a copy from plugin.path), with only settings its
 * ConfigDef defines; their values are what that ConfigDef parses, as the class's configure read them once it
 * accepted them. Anything else (InsertHeader among them: ByteArrayConverter's refusal of its header is left to
 * Connect's objects) keeps the whole chain on Connect's path.
 */
final class NativeStages {
    private static final String TRANSFORMS = "org.apache.kafka.connect.transforms.";
    private static final String PREDICATES = TRANSFORMS + "predicates.";

    private NativeStages() {
    }

    /** The chain on bytes, or null when a stage is not one it computes exactly. */
    static NativeRowChain chain(List<Map<String, Object>> stages, TransformChain connect) {
        List<NativeRowChain.Stage> out = new ArrayList<>();
        for (int i = 0; i < connect.size(); i++) {
            NativeRowChain.Stage stage = stage(stages.get(i), connect, i);
            if (stage == null) {
                return null;
            }
            out.add(stage);
        }
        return new NativeRowChain(out, connect);
    }

    @SuppressWarnings("unchecked")
    private static NativeRowChain.Stage stage(Map<String, Object> spec, TransformChain connect, int i) {
        NativeRowChain.Condition when = null;
        Predicate<SourceRecord> predicate = connect.predicate(i);
        if (predicate != null) {
            when = condition(predicate, ((Map<String, Object>) spec.get("predicate")).get("config"));
            if (when == null) {
                return null;
            }
        }
        Transformation<SourceRecord> t = connect.transformation(i);
        Object config = spec.get("config");
        if (isConnects(t, TRANSFORMS + "Filter") && understood(t.config(), config)) {
            return new NativeRowChain.Stage(when, connect.negated(i), null);
        } else if (isConnects(t, TRANSFORMS + "DropHeaders") && understood(t.config(), config)) {
            List<String> names = (List<String>) parsed(t.config(), config).get("headers");
            return new NativeRowChain.Stage(when, connect.negated(i), new HashSet<>(names));
        }
        return null;
    }

    /** The predicate on bytes, or null when it is not one of those. */
    private static NativeRowChain.Condition condition(Predicate<SourceRecord> p, Object config) {
        if (isConnects(p, PREDICATES + "HasHeaderKey") && understood(p.config(), config)) {
            String name = (String) parsed(p.config(), config).get("name");
            return (topic, value, headers) -> hasHeader(headers, name);
        } else if (isConnects(p, PREDICATES + "RecordIsTombstone") && understood(p.config(), config)) {
            return (topic, value, headers) -> value == null;
        } else if (isConnects(p, PREDICATES + "TopicNameMatches") && understood(p.config(), config)) {
            return new TopicMatches(Pattern.compile((String) parsed(p.config(), config).get("pattern")));
        }
        return null;
    }

    /** HasHeaderKey: at least one header of that name (Headers.allWithName). */
    private static boolean hasHeader(List<Header> headers, String name) {
        for (Header h : headers) {
            if (h.key().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** TopicNameMatches: the whole topic name matches. A partition's records share one topic, so the last topic's
     * answer is kept (a chain belongs to one task's thread). */
    private static final class TopicMatches implements NativeRowChain.Condition {
        private final Pattern pattern;
        private String lastTopic;
        private boolean lastMatched;

        TopicMatches(Pattern pattern) {
            this.pattern = pattern;
        }

        @Override
        public boolean holds(String topic, byte[] value, List<Header> headers) {
            if (topic != lastTopic) {  // the same String is the same answer; another one is matched again
                lastMatched = topic != null && pattern.matcher(topic).matches();
                lastTopic = topic;
            }
            return lastMatched;
        }
    }

    /** Every setting a string, under a key the ConfigDef defines (or {@code type}, which the spec adds as Connect's
     * worker does): anything else, however Connect would take it, is left to Connect. */
    @SuppressWarnings("unchecked")
    private static boolean understood(ConfigDef def, Object config) {
        Map<String, Object> given = config == null ? Map.of() : (Map<String, Object>) config;
        for (Map.Entry<String, Object> e : given.entrySet()) {
            boolean defined = "type".equals(e.getKey()) || def.configKeys().containsKey(e.getKey());
            if (!defined || !(e.getValue() instanceof String)) {
                return false;
            }
        }
        return true;
    }

    /** The settings as the class's own configure read them (AbstractConfig parses with its ConfigDef). */
    private static Map<String, Object> parsed(ConfigDef def, Object config) {
        return def.parse(config == null ? Map.of() : (Map<?, ?>) config);
    }

    /** The instance's class is Connect's class of that name as this JVM loads it (a copy elsewhere is not). */
    private static boolean isConnects(Object instance, String name) {
        Class<?> c = instance.getClass();
        if (!c.getName().equals(name)) {
            return false;
        }
        try {
            return c == Class.forName(name, false, NativeStages.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }
}
