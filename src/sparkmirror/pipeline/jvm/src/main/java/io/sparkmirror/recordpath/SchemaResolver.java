package io.sparkmirror.recordpath;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The target registry's id for a source schema id, registering the schema there first when needed.
 *
 * <p>The source registry names the subjects and versions under which the id is registered. The subject of the record's
 * topic under TopicNameStrategy ({@code <topic>-key} or {@code -value}) is taken first and renamed for the remote topic
 * ({@code orders-value} becomes {@code A.orders-value}, as policy/subjects.py names it); a subject of another strategy
 * keeps its name. Every version of that subject up to the needed one is registered on the target in order, so the
 * target's versions follow the source's; schemas a version references are registered first, under their own subjects,
 * and referenced by the target's versions. Registering a schema the target holds already changes nothing.
 *
 * <p>Answers are kept for the life of the JVM: a registry never gives an id to another schema.
 */
final class SchemaResolver implements SchemaIds.Resolver {
    /** A source id the source registry does not know. */
    static final class UnknownId extends RuntimeException {
        private static final long serialVersionUID = 1L;

        UnknownId(String message) {
            super(message);
        }
    }

    private record Key(String source, String target, String sourceTopic, String remoteTopic, boolean isKey,
                       int sourceId) {}

    private static final Map<Key, Integer> KNOWN = new ConcurrentHashMap<>();

    private final RegistryClient source;
    private final RegistryClient target;

    SchemaResolver(RegistryClient source, RegistryClient target) {
        this.source = source;
        this.target = target;
    }

    @Override
    public int targetId(String sourceTopic, String remoteTopic, boolean isKey, int sourceId) {
        Key key = new Key(source.url, target.url, sourceTopic, remoteTopic, isKey, sourceId);
        Integer known = KNOWN.get(key);
        if (known != null) {
            return known;
        }
        int id = resolve(sourceTopic, remoteTopic, isKey, sourceId);
        KNOWN.put(key, id);
        return id;
    }

    private int resolve(String sourceTopic, String remoteTopic, boolean isKey, int sourceId) {
        List<Map<String, Object>> where = source.subjectVersionsOf(sourceId);
        if (where == null || where.isEmpty()) {
            throw new UnknownId("schema id " + sourceId + " is not in the source's schema registry " + source.url);
        }
        String topicSubject = sourceTopic + (isKey ? "-key" : "-value");
        Map<String, Object> chosen = where.get(0);
        for (Map<String, Object> sv : where) {
            if (topicSubject.equals(sv.get("subject"))) {
                chosen = sv;
            }
        }
        String subject = (String) chosen.get("subject");
        String targetSubject = subject.equals(topicSubject) ? remoteTopic + (isKey ? "-key" : "-value") : subject;
        return copyUpTo(subject, ((Number) chosen.get("version")).intValue(), targetSubject).id();
    }

    /** A version registered on the target: its id there, and the schema as registered. */
    private record Copied(int id, Map<String, Object> schema) {}

    /** Registers the source subject's versions up to {@code version} under {@code targetSubject}, in order; the last
     * one. */
    private Copied copyUpTo(String subject, int version, String targetSubject) {
        Copied last = null;
        for (int v : source.versions(subject)) {
            if (v > version) {
                break;
            }
            last = copyVersion(subject, v, targetSubject);
        }
        if (last == null) {
            throw new RecordPathException("schema registry " + source.url + ": subject '" + subject + "' lost version "
                + version + " while it was being copied");
        }
        return last;
    }

    @SuppressWarnings("unchecked")
    private Copied copyVersion(String subject, int version, String targetSubject) {
        Map<String, Object> v = source.version(subject, version);
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("schema", v.get("schema"));
        if (v.get("schemaType") != null) {
            schema.put("schemaType", v.get("schemaType"));
        }
        List<Map<String, Object>> refs = (List<Map<String, Object>>) v.get("references");
        if (refs != null && !refs.isEmpty()) {
            List<Map<String, Object>> targetRefs = new ArrayList<>();
            for (Map<String, Object> ref : refs) {
                String refSubject = (String) ref.get("subject");
                Copied copied = copyUpTo(refSubject, ((Number) ref.get("version")).intValue(), refSubject);
                Map<String, Object> out = new HashMap<>(ref);
                out.put("version", target.versionOf(refSubject, copied.schema()));
                targetRefs.add(out);
            }
            schema.put("references", targetRefs);
        }
        return new Copied(target.register(targetSubject, schema), schema);
    }
}
