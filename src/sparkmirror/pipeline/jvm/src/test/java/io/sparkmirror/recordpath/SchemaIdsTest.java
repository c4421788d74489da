package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SchemaIdsTest {
    private final List<String> asked = new ArrayList<>();
    private final SchemaIds.Resolver resolver = (sourceTopic, topic, isKey, id) -> {
        asked.add(topic + (isKey ? "-key:" : "-value:") + id);
        if (id == 404) {
            throw new SchemaResolver.UnknownId("schema id 404 is not in the source registry");
        }
        return isKey ? id + 1000 : id + 100;
    };
    private final SchemaIds ids = new SchemaIds(resolver, false);

    private static byte[] wire(int id, int... payload) {
        byte[] out = new byte[SchemaIds.HEADER_BYTES + payload.length];
        out[1] = (byte) (id >>> 24);
        out[2] = (byte) (id >>> 16);
        out[3] = (byte) (id >>> 8);
        out[4] = (byte) id;
        for (int i = 0; i < payload.length; i++) {
            out[SchemaIds.HEADER_BYTES + i] = (byte) payload[i];
        }
        return out;
    }

    @Test
    void theIdIsReadBigEndianAfterTheMagicByte() {
        assertEquals(7, SchemaIds.schemaId(wire(7)));
        assertEquals(0x01020304, SchemaIds.schemaId(wire(0x01020304, 9)));
        assertEquals(Integer.MAX_VALUE, SchemaIds.schemaId(wire(Integer.MAX_VALUE)));
    }

    @Test
    void bytesNotInTheWireFormatPassUntouchedAndNothingIsAsked() {
        byte[] json = "{\"a\":1}".getBytes();
        byte[] shortOne = {0, 0, 1};
        byte[] negative = wire(-5, 1);  // a zero byte, then bytes no registry id has
        byte[] zero = wire(0, 1);
        assertSame(json, ids.rewrite("t", "A.t", false, json));
        assertSame(shortOne, ids.rewrite("t", "A.t", false, shortOne));
        assertSame(negative, ids.rewrite("t", "A.t", false, negative));
        assertSame(zero, ids.rewrite("t", "A.t", false, zero));
        assertEquals(null, ids.rewrite("t", "A.t", true, null));
        assertEquals(List.of(), asked);
    }

    @Test
    void onlyTheIdChangesTheProtobufMessageIndexesAndPayloadStay() {
        byte[] protobuf = wire(5, 2, 0, 2, 0x0a, 0x03, 'a', 'b', 'c');  // indexes [1, 1] zig-zag coded, then the message
        assertArrayEquals(wire(105, 2, 0, 2, 0x0a, 0x03, 'a', 'b', 'c'), ids.rewrite("t", "A.t", false, protobuf));
        assertEquals(5, SchemaIds.schemaId(protobuf), "the record's own bytes are not changed");
    }

    @Test
    void eachIdIsResolvedOncePerTopicAndKindThenCached() {
        ids.rewrite("t", "A.t", false, wire(5, 1));
        ids.rewrite("t", "A.t", false, wire(5, 2));
        ids.rewrite("t", "A.t", true, wire(5, 3));
        ids.rewrite("t", "A.u", false, wire(5, 4));
        assertEquals(List.of("A.t-value:5", "A.t-key:5", "A.u-value:5"), asked);
        assertArrayEquals(wire(1005, 3), ids.rewrite("t", "A.t", true, wire(5, 3)));
    }

    @Test
    void anUnknownIdFailsWithTheResolversMessageAndIsNotCached() {
        var e = assertThrows(SchemaResolver.UnknownId.class, () -> ids.rewrite("t", "A.t", false, wire(404)));
        assertEquals("schema id 404 is not in the source registry", e.getMessage());
        assertThrows(SchemaResolver.UnknownId.class, () -> ids.rewrite("t", "A.t", false, wire(404)));
        assertEquals(2, asked.size());
    }

    @Test
    void whenUnknownIdsPassTheyAreKeptAndAskedOnce() {
        SchemaIds passing = new SchemaIds(resolver, true);
        byte[] unknown = wire(404, 1);
        assertSame(unknown, passing.rewrite("t", "A.t", false, unknown));
        assertSame(unknown, passing.rewrite("t", "A.t", false, unknown));
        assertEquals(List.of("A.t-value:404"), asked);
    }

    @Test
    void exemptTopicsKeepTheirBytesUnasked() {
        SchemaIds exempting = new SchemaIds(resolver, false, java.util.Set.of("heartbeats"));
        byte[] heartbeatKey = wire(7, 1);  // MM2's heartbeat key starts with its version, a zero short
        assertSame(heartbeatKey, exempting.rewrite("heartbeats", "A.heartbeats", true, heartbeatKey));
        assertEquals(List.of(), asked);
    }
}
