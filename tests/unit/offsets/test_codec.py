"""The MM2 internal-record codecs against bytes MM2 itself produced.

tests/data/mm2/golden_records.json was generated once by a throwaway Java program (kept out of the repo)
in package org.apache.kafka.connect.mirror, compiled and run against Kafka 4.3.1's jars from
.cache/jars/kafka/ (connect-mirror-client, connect-mirror, kafka-clients, connect-api, slf4j-api):
- the samples are `new OffsetSync(tp, up, down)`, `new Checkpoint(group, tp, up, down, metadata)` and
  `new Heartbeat(source, target, ts)`, with key/value from their package-private recordKey()/recordValue();
- `mm2_decode` holds edge inputs (newer version numbers via serializeValue((short) n), trailing bytes,
  truncations, a negative string length, invalid UTF-8) with what MM2's deserializeRecord() returned or
  threw, run with JVM assertions off as in production.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparkmirror.errors import SparkmirrorError
from sparkmirror.offsets.codec import (
    Checkpoint,
    Heartbeat,
    OffsetCodecError,
    decode_checkpoint,
    decode_heartbeat,
    encode_checkpoint,
    encode_heartbeat,
)
from sparkmirror.offsets.syncs import OffsetSync, decode_offset_sync, encode_offset_sync

GOLDEN = json.loads((Path(__file__).parents[2] / "data" / "mm2" / "golden_records.json").read_text("utf-8"))

CODECS = {
    "offset_sync": (OffsetSync, encode_offset_sync, decode_offset_sync, "offset-syncs"),
    "checkpoint": (Checkpoint, encode_checkpoint, decode_checkpoint, "checkpoints"),
    "heartbeat": (Heartbeat, encode_heartbeat, decode_heartbeat, "heartbeats"),
}

SAMPLES = [pytest.param(kind, case, id=f"{kind}-{i}") for kind in CODECS for i, case in enumerate(GOLDEN[kind])]
MM2_DECODE = [pytest.param(case, id=f"{case['kind']}: {case['why']}") for case in GOLDEN["mm2_decode"]]


@pytest.mark.parametrize(("kind", "case"), SAMPLES)
def test_encoding_matches_mm2_bytes(kind, case):
    record_type, encode, _, _ = CODECS[kind]
    key, value = encode(record_type(**case["sample"]))
    assert (key.hex(), value.hex()) == (case["key"], case["value"])


@pytest.mark.parametrize(("kind", "case"), SAMPLES)
def test_decoding_mm2_bytes_gives_the_sample(kind, case):
    record_type, _, decode, _ = CODECS[kind]
    assert decode(bytes.fromhex(case["key"]), bytes.fromhex(case["value"])) == record_type(**case["sample"])


@pytest.mark.parametrize(("kind", "case"), SAMPLES)
def test_every_truncation_is_rejected_naming_the_topic_kind(kind, case):
    _, _, decode, topic_kind = CODECS[kind]
    key, value = bytes.fromhex(case["key"]), bytes.fromhex(case["value"])
    for cut in range(len(key)):
        with pytest.raises(OffsetCodecError, match=f"bad {topic_kind} record key"):
            decode(key[:cut], value)
    for cut in range(len(value)):
        with pytest.raises(OffsetCodecError, match=f"bad {topic_kind} record value"):
            decode(key, value[:cut])


@pytest.mark.parametrize("case", MM2_DECODE)
def test_decoder_accepts_and_rejects_what_mm2_does(case):
    record_type, _, decode, topic_kind = CODECS[case["kind"]]
    key, value = bytes.fromhex(case["key"]), bytes.fromhex(case["value"])
    if "mm2_error" in case or "\ufffd" in json.dumps(case["decoded"], ensure_ascii=False):
        # MM2 turns invalid UTF-8 into U+FFFD; MM2 never writes it, so we reject the record instead.
        with pytest.raises(ValueError, match=topic_kind):
            decode(key, value)
    else:
        assert decode(key, value) == record_type(**case["decoded"])


def test_newer_versions_are_read_with_the_v0_layout():
    key, value = encode_checkpoint(Checkpoint("g", "t", 1, 10, 9, "m"))
    newer = (7).to_bytes(2, "big") + value[2:] + b"\x00\x00\x00\x2a"  # version 7 plus a field we don't know
    assert decode_checkpoint(key, newer) == Checkpoint("g", "t", 1, 10, 9, "m")


def test_errors_say_which_field_and_where():
    with pytest.raises(OffsetCodecError) as err:
        decode_heartbeat(bytes.fromhex("000141000142"), bytes.fromhex("0000000001"))
    assert str(err.value) == ("bad heartbeats record value (5 bytes): field 'timestamp' needs 8 bytes at byte 2, "
                              "only 3 left")
    with pytest.raises(OffsetCodecError, match="field 'topic' has negative length -1"):
        decode_offset_sync(bytes.fromhex("ffff00000000"), bytes(16))
    _, value = encode_checkpoint(Checkpoint("g", "t", 0, 1, 1))
    with pytest.raises(OffsetCodecError, match=r"bad checkpoints record key: field 'group' is not UTF-8"):
        decode_checkpoint(bytes.fromhex("0002fffe0001410000000100"), value)


def test_null_keys_and_values_are_rejected():
    key, value = encode_offset_sync(OffsetSync("t", 0, 1, 1))
    with pytest.raises(OffsetCodecError, match="bad offset-syncs record key: it is null"):
        decode_offset_sync(None, value)
    with pytest.raises(OffsetCodecError, match="bad offset-syncs record value: it is null"):
        decode_offset_sync(key, None)


def test_codec_errors_are_value_errors_in_the_sparkmirror_hierarchy():
    assert issubclass(OffsetCodecError, ValueError) and issubclass(OffsetCodecError, SparkmirrorError)


@pytest.mark.parametrize(("record", "message"), [
    (OffsetSync("t", 2**31, 0, 0), "cannot encode offset-syncs record key: field 'partition'"),
    (OffsetSync("t", 0, 2**63, 0), "cannot encode offset-syncs record value: field 'upstreamOffset'"),
    (Checkpoint("g", "t", 0, 0, 0, "x" * 32768), "field 'metadata' is 32768 bytes of UTF-8, more than 32767"),
    (Checkpoint("g\ud800", "t", 0, 0, 0), "cannot encode checkpoints record key: field 'group' has no UTF-8 form"),
    (Heartbeat("A", "B", -(2**63) - 1), "cannot encode heartbeats record value: field 'timestamp'"),
])
def test_unencodable_records_are_rejected(record, message):
    encode = {OffsetSync: encode_offset_sync, Checkpoint: encode_checkpoint, Heartbeat: encode_heartbeat}
    with pytest.raises(OffsetCodecError, match=message):
        encode[type(record)](record)


def test_longest_string_mm2_allows_round_trips():
    checkpoint = Checkpoint("g", "t", 0, 0, 0, "é" * 16383 + "x")  # 32767 bytes of UTF-8
    assert decode_checkpoint(*encode_checkpoint(checkpoint)) == checkpoint


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
_INT32 = st.integers(-(2**31), 2**31 - 1)
_INT64 = st.integers(-(2**63), 2**63 - 1)


@given(st.builds(OffsetSync, _TEXT, _INT32, _INT64, _INT64))
def test_offset_syncs_round_trip(sync):
    assert decode_offset_sync(*encode_offset_sync(sync)) == sync


@given(st.builds(Checkpoint, _TEXT, _TEXT, _INT32, _INT64, _INT64, _TEXT))
def test_checkpoints_round_trip(checkpoint):
    assert decode_checkpoint(*encode_checkpoint(checkpoint)) == checkpoint


@given(st.builds(Heartbeat, _TEXT, _TEXT, _INT64))
def test_heartbeats_round_trip(heartbeat):
    assert decode_heartbeat(*encode_heartbeat(heartbeat)) == heartbeat
