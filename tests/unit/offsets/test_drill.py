"""The failover drill's verdict: where the target's record at the translated offset is among the source's."""

from sparkmirror.model import KafkaRecord
from sparkmirror.offsets.drill import judge_partition, record_digest


def rec(offset: int, value: str, ts: int = 1000) -> KafkaRecord:
    return KafkaRecord(0, offset, b"k", value.encode(), (("h", b"1"),), 0, ts)


SOURCE = [rec(o, f"v{o}") for o in range(90, 110)]


def test_the_record_at_the_committed_offset_is_0_and_0():
    p = judge_partition("t", 0, 100, "A.t", 100, SOURCE, rec(100, "v100"), 110)
    assert (p.reread, p.miss, p.ok) == (0, 0, True)


def test_found_earlier_it_would_re_read_found_later_it_would_miss():
    reread = judge_partition("t", 0, 100, "A.t", 97, SOURCE, rec(97, "v97"), 110)
    assert (reread.reread, reread.miss, reread.ok) == (3, 0, True)
    # the target lost records: what it holds at the translated offset is the source's offset 104
    missed = judge_partition("t", 0, 100, "A.t", 100, SOURCE, rec(100, "v104"), 110)
    assert (missed.reread, missed.miss, missed.ok) == (0, 4, False)


def test_a_gap_in_source_offsets_counts_records_not_offsets():
    gapped = [r for r in SOURCE if r.offset != 102]  # a transaction marker at 102
    assert judge_partition("t", 0, 100, "A.t", 100, gapped, rec(100, "v104"), 110).miss == 3


def test_at_the_end_of_the_copy_the_rest_is_lag_and_an_unknown_record_is_said_so():
    end = judge_partition("t", 0, 105, "A.t", 105, SOURCE, None, 110)
    assert (end.reread, end.miss, end.not_replicated) == (0, 0, 5)
    stranger = judge_partition("t", 0, 100, "A.t", 100, SOURCE, rec(100, "nobody"), 110)
    assert stranger.miss is None and not stranger.ok and "none of the source's 20 records" in stranger.note
    untranslated = judge_partition("t", 0, 100, None, None, SOURCE, None, 110)
    assert untranslated.miss is None and "auto.offset.reset" in untranslated.note


def test_the_digest_covers_key_value_headers_and_timestamp():
    base = rec(1, "v")
    assert record_digest(base) == record_digest(rec(2, "v"))  # the offset is not part of it
    for other in (rec(1, "w"), rec(1, "v", ts=1001), KafkaRecord(0, 1, b"k", b"v", (), 0, 1000),
                  KafkaRecord(0, 1, None, b"v", (("h", b"1"),), 0, 1000)):
        assert record_digest(other) != record_digest(base)
