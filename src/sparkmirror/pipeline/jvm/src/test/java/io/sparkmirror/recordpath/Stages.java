package io.sparkmirror.recordpath;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Stages of a transform chain as the writer's spec holds them (config/transforms.TransformStage.to_spec). */
final class Stages {
    private Stages() {
    }

    /** A configured class as the spec names it: alias, type, config (Plugin.to_spec). */
    private static Map<String, Object> plugin(String alias, String type, Map<String, Object> config) {
        Map<String, Object> out = new HashMap<>();
        out.put("alias", alias);
        out.put("type", type);
        out.put("config", config);
        return out;
    }

    static Map<String, Object> stage(String alias, String type, Map<String, Object> config) {
        Map<String, Object> out = plugin(alias, type, config);
        out.put("negate", false);
        out.put("predicate", null);
        return out;
    }

    /** The stage applied only where the predicate ({@code type} with {@code config}) holds, or fails if negated. */
    static Map<String, Object> when(Map<String, Object> stage, String alias, String type, Map<String, Object> config,
                                    boolean negate) {
        stage.put("predicate", plugin(alias, type, config));
        stage.put("negate", negate);
        return stage;
    }

    static TransformChain chain(List<Map<String, Object>> stages) {
        return new TransformChain(stages, Stages.class.getClassLoader());
    }

    /** The writer's "transforms" spec (options.transforms_spec). */
    static Map<String, Object> spec(List<Map<String, Object>> stages, String tolerance) {
        Map<String, Object> out = new HashMap<>();
        out.put("stages", stages);
        out.put("errors_tolerance", tolerance);
        out.put("plugin_path", List.of());
        out.put("source", "A");
        return out;
    }
}
