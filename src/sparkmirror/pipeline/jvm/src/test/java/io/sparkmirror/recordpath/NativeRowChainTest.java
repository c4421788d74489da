package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Stages.stage;
import static io.sparkmirror.recordpath.Stages.when;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.spark.sql.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The chain on bytes against the same chain on Connect's objects: for generated rows (headers duplicated, null
 * valued or none, null keys and tombstones, several topics) the same record comes out, or both drop it. */
class NativeRowChainTest {
    /** Remote topics; the source topic is the name without "A." or "B.", so a pattern on it tells them apart. */
    private static final String[] TOPICS = {"A.orders", "A.audit-log", "A.audit", "B.audit-x"};
    private static final String[] NAMES = {"ssn", "skip", "x", "ssn ", "SSN", "Skip", Provenance.HEADER};
    private static final int ROWS = 600;

    /** One record's parts as the writer hands them to the chain. */
    private record In(String topic, long offset, String remoteTopic, int partition, long timestamp, byte[] key,
                      byte[] value, List<Row> headers, byte[] provenance) {
        ProducerRecord<byte[], byte[]> through(RowChain chain) throws TransformChain.StageFailure {
            return chain.apply(ConnectShape.sourcePartition("A", topic, partition), topic, offset, remoteTopic,
                               partition, timestamp, key, value, headers, provenance);
        }
    }

    static List<In> rows() {
        Random random = new Random(20240611L);
        List<In> out = new ArrayList<>();
        for (int i = 0; i < ROWS; i++) {
            String remote = TOPICS[random.nextInt(TOPICS.length)];
            Row[] headers = new Row[random.nextInt(6)];
            for (int h = 0; h < headers.length; h++) {
                headers[h] = Rows.header(NAMES[random.nextInt(NAMES.length)], maybe(random, "v" + random.nextInt(3)));
            }
            out.add(new In(remote.substring(2), i, remote, random.nextInt(4), random.nextInt(3) * 1_000L,
                           Rows.bytes(maybe(random, "k" + i)), Rows.bytes(maybe(random, "value " + i)),
                           random.nextInt(5) == 0 ? null : Rows.list(headers),
                           random.nextBoolean() ? null : Rows.bytes("C")));
        }
        return out;
    }

    /** {@code text}, or else null (one in four) or empty (one in eight). */
    private static String maybe(Random random, String text) {
        int draw = random.nextInt(8);
        return draw < 2 ? null : draw == 2 ? "" : text;
    }

    /** Each predicate as a file may set it, by name. "audit.*|B\\..*" matches the audit topics' source names but of
     * their remote names only B.audit-x; "audit" only finds a part of a topic name, which is no match. */
    private static final Map<String, Supplier<Map<String, Object>>> PREDICATES = Map.of(
        "HasHeaderKey", () -> predicate("HasHeaderKey", Map.of("name", " skip ")),
        "RecordIsTombstone", () -> predicate("RecordIsTombstone", Map.of()),
        "TopicNameMatches remote", () -> predicate("TopicNameMatches", Map.of("pattern", "A\\.audit.*")),
        "TopicNameMatches source", () -> predicate("TopicNameMatches", Map.of("pattern", "audit.*|B\\..*")),
        "TopicNameMatches part", () -> predicate("TopicNameMatches", Map.of("pattern", "audit")));

    private static Map<String, Object> predicate(String type, Map<String, Object> config) {
        return Map.of("type", type, "config", config);
    }

    private static final Map<String, Supplier<Map<String, Object>>> TRANSFORMS = Map.of(
        "DropHeaders ssn,x", () -> stage("drop", "DropHeaders", Map.of("headers", " ssn , x", "type", "DropHeaders")),
        "DropHeaders skip", () -> stage("drop", "DropHeaders", Map.of("headers", "skip")),
        "Filter", () -> stage("skip", "Filter", Map.of("type", "org.apache.kafka.connect.transforms.Filter")));

    @SuppressWarnings("unchecked")
    private static Map<String, Object> under(Map<String, Object> stage, String predicate, boolean negate) {
        Map<String, Object> p = PREDICATES.get(predicate).get();
        return when(stage, "p", (String) p.get("type"), Map.copyOf((Map<String, Object>) p.get("config")), negate);
    }

    /** Every transform alone, under every predicate with negate off and on; and chains of two and three. */
    static Stream<Arguments> chains() {
        List<Arguments> out = new ArrayList<>();
        for (String t : TRANSFORMS.keySet()) {
            out.add(Arguments.of(t, (Supplier<List<Map<String, Object>>>) () -> List.of(TRANSFORMS.get(t).get())));
            for (String p : PREDICATES.keySet()) {
                for (boolean negate : new boolean[] {false, true}) {
                    out.add(Arguments.of(t + " if " + (negate ? "not " : "") + p,
                        (Supplier<List<Map<String, Object>>>) () -> List.of(under(TRANSFORMS.get(t).get(), p, negate))));
                }
            }
        }
        out.add(Arguments.of("DropHeaders skip, then Filter if HasHeaderKey skip",
            (Supplier<List<Map<String, Object>>>) () -> List.of(TRANSFORMS.get("DropHeaders skip").get(),
                                                               under(TRANSFORMS.get("Filter").get(), "HasHeaderKey",
                                                                     false))));
        out.add(Arguments.of("DropHeaders ssn,x if tombstone, Filter if not HasHeaderKey skip, DropHeaders skip",
            (Supplier<List<Map<String, Object>>>) () -> List.of(
                under(TRANSFORMS.get("DropHeaders ssn,x").get(), "RecordIsTombstone", false),
                under(TRANSFORMS.get("Filter").get(), "HasHeaderKey", true),
                TRANSFORMS.get("DropHeaders skip").get())));
        return out.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("chains")
    void theBytesGiveWhatConnectsObjectsGive(String name, Supplier<List<Map<String, Object>>> stages)
            throws Exception {
        RowChain connect = new ConnectRowChain(Stages.chain(stages.get()));
        RowChain bytes = RowChain.of(stages.get(), Stages.class.getClassLoader());
        assertInstanceOf(NativeRowChain.class, bytes);
        int dropped = 0;
        for (In in : rows()) {
            String expected = shown(in.through(connect));
            assertEquals(expected, shown(in.through(bytes)), "record " + in.offset());
            dropped += expected == null ? 1 : 0;
        }
        assertTrue(dropped == 0 || name.contains("Filter"), name + " dropped " + dropped);
    }

    /** Each predicate holds for some rows and not for others (but the partial pattern, which never matches). */
    @ParameterizedTest(name = "{0}")
    @MethodSource("predicateNames")
    void theRowsTryEveryPredicateBothWays(String predicate) throws Exception {
        TransformChain filter = Stages.chain(List.of(under(TRANSFORMS.get("Filter").get(), predicate, false)));
        int held = 0;
        for (In in : rows()) {
            held += in.through(new ConnectRowChain(filter)) == null ? 1 : 0;
        }
        if (predicate.endsWith("part")) {
            assertEquals(0, held);
        } else {
            assertTrue(held > ROWS / 20 && held < ROWS - ROWS / 20, predicate + " held for " + held);
        }
    }

    static Stream<String> predicateNames() {
        return PREDICATES.keySet().stream();
    }

    /** Everything the target gets: topic, partition, timestamp, key, value, headers in order; null if dropped. */
    private static String shown(ProducerRecord<byte[], byte[]> record) {
        if (record == null) {
            return null;
        }
        StringBuilder out = new StringBuilder(record.topic() + "/" + record.partition() + " @" + record.timestamp()
            + " key=" + hex(record.key()) + " value=" + hex(record.value()) + " headers=");
        for (Header h : record.headers()) {
            out.append('[').append(h.key()).append('=').append(hex(h.value())).append(']');
        }
        return out.toString();
    }

    private static String hex(byte[] bytes) {
        return bytes == null ? "null" : HexFormat.of().formatHex(bytes);
    }
}
