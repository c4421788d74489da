package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * MM2's {@code transforms} with their {@code predicates}, run as Connect runs a connector's chain: each stage
 * applies its transformation when it has no predicate or when the predicate's result, negated by {@code negate},
 * holds; a stage returning null drops the record and ends the chain. Built once per task from the writer's spec
 * (each stage's settings as Connect hands them over: the stage's keys under {@code transforms.<alias>.} without
 * {@code predicate} and {@code negate}; the predicate's under {@code predicates.<alias>.}).
 */
final class TransformChain {
    /** A stage failed on a record: the stage's alias and class, with what it threw. */
    static final class StageFailure extends Exception {
        private static final long serialVersionUID = 1L;

        StageFailure(String stage, Throwable cause) {
            super(stage + ": " + cause, cause);
        }
    }

    private final List<String> names = new ArrayList<>();
    private final List<Transformation<SourceRecord>> transformations = new ArrayList<>();
    private final List<Predicate<SourceRecord>> predicates = new ArrayList<>();
    private final List<Boolean> negated = new ArrayList<>();

    /** {@code stages}: per stage alias, type, config, negate and an optional predicate (alias, type, config). */
    @SuppressWarnings("unchecked")
    TransformChain(List<Map<String, Object>> stages, ClassLoader loader) {
        for (Map<String, Object> stage : stages) {
            String alias = (String) stage.get("alias");
            String type = (String) stage.get("type");
            Transformation<SourceRecord> t = PluginClasses.instance(type, loader, Transformation.class);
            configure(alias, type, () -> t.configure(strings(stage.get("config"))));
            Map<String, Object> p = (Map<String, Object>) stage.get("predicate");
            Predicate<SourceRecord> predicate = null;
            if (p != null) {
                String predicateType = (String) p.get("type");
                Predicate<SourceRecord> made = PluginClasses.instance(predicateType, loader, Predicate.class);
                configure((String) p.get("alias"), predicateType, () -> made.configure(strings(p.get("config"))));
                predicate = made;
            }
            names.add("transform '" + alias + "' (" + type + ")");
            transformations.add(t);
            predicates.add(predicate);
            negated.add(Boolean.TRUE.equals(stage.get("negate")));
        }
    }

    private static void configure(String alias, String type, Runnable configure) {
        try {
            configure.run();
        } catch (RuntimeException e) {
            throw new RecordPathException("'" + alias + "' (" + type + ") refused its settings: " + e.getMessage());
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> strings(Object config) {
        return config == null ? new HashMap<>() : new HashMap<>((Map<String, Object>) config);
    }

    int size() {
        return transformations.size();
    }

    /** Stage {@code i}'s transformation, as configured (NativeStages reads its class and settings). */
    Transformation<SourceRecord> transformation(int i) {
        return transformations.get(i);
    }

    /** Stage {@code i}'s predicate, or null. */
    Predicate<SourceRecord> predicate(int i) {
        return predicates.get(i);
    }

    boolean negated(int i) {
        return negated.get(i);
    }

    /** The record after every stage, or null when a stage dropped it. */
    SourceRecord apply(SourceRecord record) throws StageFailure {
        SourceRecord current = record;
        for (int i = 0; i < transformations.size(); i++) {
            try {
                Predicate<SourceRecord> p = predicates.get(i);
                if (p == null || negated.get(i) ^ p.test(current)) {
                    current = transformations.get(i).apply(current);
                }
            } catch (RuntimeException e) {
                throw new StageFailure(names.get(i), e);
            }
            if (current == null) {
                return null;
            }
        }
        return current;
    }

    void close() {
        for (Transformation<SourceRecord> t : transformations) {
            t.close();
        }
        for (Predicate<SourceRecord> p : predicates) {
            if (p != null) {
                p.close();
            }
        }
    }
}
