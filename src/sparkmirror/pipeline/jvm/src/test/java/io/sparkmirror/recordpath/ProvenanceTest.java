package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.Rows.bytes;
import static io.sparkmirror.recordpath.Rows.header;
import static io.sparkmirror.recordpath.Rows.list;
import static io.sparkmirror.recordpath.Rows.shown;
import static io.sparkmirror.recordpath.Rows.text;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;

class ProvenanceTest {
    private static final String HEADER = Provenance.HEADER;
    private final Provenance aToB = new Provenance("A", "B");

    @Test
    void aRecordWithoutTheHeaderGetsItLastNamingTheSource() {
        assertEquals(List.of(HEADER + "=A"), shown(aToB.stamp(null)));
        assertEquals(List.of("x=1", "y=null", HEADER + "=A"),
                     shown(aToB.stamp(list(header("x", "1"), header("y", null)))));
    }

    @Test
    void theHeaderIsExtendedWhereItIsAndTheOthersKeepTheirOrder() {
        Header[] out = aToB.stamp(list(header("x", "1"), header(HEADER, "C"), header("z", "2")));
        assertEquals(List.of("x=1", HEADER + "=C,A", "z=2"), shown(out));
    }

    @Test
    void aRecordThatAlreadyPassedTheTargetIsDropped() {
        assertNull(aToB.stamp(list(header(HEADER, "B"))));
        assertNull(aToB.stamp(list(header("x", "1"), header(HEADER, "C,B,A"))));
        assertNull(aToB.nextOf(list(header(HEADER, "B,C"))));
    }

    @Test
    void theSourceIsNotAddedTwiceWhenItIsAlreadyLast() {
        assertEquals(List.of(HEADER + "=C,A"), shown(aToB.stamp(list(header(HEADER, "C,A")))));
        assertEquals("C,A", text(aToB.nextOf(list(header(HEADER, "C,A")))));
    }

    @Test
    void emptyAliasesAndAnEmptyHeaderAreIgnored() {
        assertEquals("C,A", text(aToB.nextOf(list(header(HEADER, ",C,")))));
        assertEquals("A", text(aToB.nextOf(list(header(HEADER, null)))));
        assertEquals("A", text(aToB.nextOf(null)));
    }

    @Test
    void onlyTheFirstHeaderOfTheNameCounts() {
        Header[] out = aToB.stamp(list(header(HEADER, "C"), header(HEADER, "B")));
        assertEquals(List.of(HEADER + "=C,A", HEADER + "=B"), shown(out));
    }

    @Test
    void setReplacesTheFirstHeaderOrAddsOneLast() {
        List<Header> without = new ArrayList<>(List.of(new RecordHeader("x", bytes("1"))));
        Provenance.set(without, bytes("A"));
        assertEquals(List.of("x=1", HEADER + "=A"), shown(without));

        List<Header> with = new ArrayList<>(List.of(new RecordHeader(HEADER, bytes("C")), new RecordHeader("x", null),
                                                    new RecordHeader(HEADER, bytes("D"))));
        Provenance.set(with, bytes("C,A"));
        assertEquals(List.of(HEADER + "=C,A", "x=null", HEADER + "=D"), shown(with));
    }
}
