package io.sparkmirror.recordpath;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Schema ids in Confluent's wire format, rewritten for the target's registry: a key or value written by a registry
 * serializer starts with a zero byte and the schema's 4-byte big-endian id; what follows (Avro or JSON bytes, or
 * Protobuf's message indexes and then its bytes) stays as it is. The target's registry numbers the same schema
 * differently, so each source id is looked up once through a {@link Resolver} and then taken from the cache.
 *
 * <p>Bytes not in that format (null, shorter than 5 bytes, another first byte) pass untouched: a topic may hold both.
 * One instance per task: not thread-safe.
 */
final class SchemaIds {
    static final byte MAGIC = 0;
    static final int HEADER_BYTES = 5;
    static final int NONE = -1;

    /** The target's id for a source id, for the keys or values a source topic's records have in their remote topic;
     * it may call the registries. An id the source registry does not know: {@link SchemaResolver.UnknownId}. */
    interface Resolver {
        int targetId(String sourceTopic, String remoteTopic, boolean isKey, int sourceId);
    }

    /** Keys and values of one topic may map one source id differently (their subjects differ), other topics too. */
    private record Slot(String sourceTopic, String remoteTopic, boolean isKey, int sourceId) {}

    private final Resolver resolver;
    private final boolean passUnknown;  // an id the source registry does not know: bytes kept (else it fails)
    private final Set<String> exempt;  // source topics of no registry's records (heartbeats: MM2's format starts with 0)
    private final Map<Slot, Integer> cache = new HashMap<>();

    SchemaIds(Resolver resolver, boolean passUnknown) {
        this(resolver, passUnknown, Set.of());
    }

    SchemaIds(Resolver resolver, boolean passUnknown, Set<String> exempt) {
        this.resolver = resolver;
        this.passUnknown = passUnknown;
        this.exempt = exempt;
    }

    /** The schema id `bytes` start with, or {@link #NONE} when they are not in the wire format (registries number
     * schemas from 1, so bytes whose id would be 0 or negative are not). */
    static int schemaId(byte[] bytes) {
        if (bytes == null || bytes.length < HEADER_BYTES || bytes[0] != MAGIC) {
            return NONE;
        }
        int id = ((bytes[1] & 0xff) << 24) | ((bytes[2] & 0xff) << 16) | ((bytes[3] & 0xff) << 8) | (bytes[4] & 0xff);
        return id > 0 ? id : NONE;
    }

    /** A copy of `bytes` (in the wire format) with `id` as its schema id; every other byte kept. */
    static byte[] withSchemaId(byte[] bytes, int id) {
        byte[] out = bytes.clone();
        out[1] = (byte) (id >>> 24);
        out[2] = (byte) (id >>> 16);
        out[3] = (byte) (id >>> 8);
        out[4] = (byte) id;
        return out;
    }

    /** `bytes` with the target's schema id, or `bytes` itself when they carry none or already the target's (or an
     * unknown one, when those pass). */
    byte[] rewrite(String sourceTopic, String remoteTopic, boolean isKey, byte[] bytes) {
        int sourceId = schemaId(bytes);
        if (sourceId == NONE || exempt.contains(sourceTopic)) {
            return bytes;
        }
        Slot slot = new Slot(sourceTopic, remoteTopic, isKey, sourceId);
        Integer targetId = cache.get(slot);
        if (targetId == null) {
            try {
                targetId = resolver.targetId(sourceTopic, remoteTopic, isKey, sourceId);
            } catch (SchemaResolver.UnknownId e) {
                if (!passUnknown) {
                    throw e;
                }
                targetId = sourceId;
            }
            cache.put(slot, targetId);
        }
        return targetId == sourceId ? bytes : withSchemaId(bytes, targetId);
    }
}
