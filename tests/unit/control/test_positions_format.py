"""from_json accepts exactly what to_json writes; every other shape is a PositionsFormatError saying where."""

from __future__ import annotations

import json

import pytest

from sparkmirror.control.positions import (
    MAX_OFFSET,
    MAX_PARTITION,
    PositionsFormatError,
    TopicPosition,
    from_json,
    to_json,
)

VALID = {"orders": TopicPosition("Zx3kQ1", {0: 0, 1: 17, 11: MAX_OFFSET}),
         "users": TopicPosition(None, {}),
         "a.b-c_d": TopicPosition("id2", {MAX_PARTITION: 5})}


def test_a_valid_file_round_trips_through_json_text():
    text = json.dumps(to_json(VALID))
    assert from_json(json.loads(text)) == VALID
    assert from_json({}) == {}


def test_a_missing_topic_id_is_read_as_unknown():
    assert from_json({"t": {"next_offsets": {"0": 3}}}) == {"t": TopicPosition(None, {0: 3})}


@pytest.mark.parametrize(("document", "message"), [
    (None, "expected an object of topic -> position, got null"),
    ([], "expected an object of topic -> position, got a list"),
    ("orders", "expected an object of topic -> position, got 'orders'"),
    (3, "expected an object of topic -> position, got 3"),
    (True, "expected an object of topic -> position, got true"),
    ({"": {"next_offsets": {}}}, "topic names must be non-empty strings, got ''"),
    ({"t": None}, "topic 't': expected an object {\"topic_id\": a string or null, \"next_offsets\": "
                  "{partition: offset}}, got null"),
    ({"t": [1, 2]}, "topic 't': expected an object"),
    ({"t": 5}, "topic 't': expected an object"),
    ({"t": {}}, "topic 't': 'next_offsets' is missing"),
    ({"t": {"topic_id": "x"}}, "topic 't': 'next_offsets' is missing"),
    ({"t": {"next_offsets": {}, "extra": 1}}, "topic 't': unexpected key 'extra'"),
    ({"t": {"topic_id": 7, "next_offsets": {}}}, "topic 't': 'topic_id' must be a string or null, got 7"),
    ({"t": {"topic_id": ["x"], "next_offsets": {}}}, "topic 't': 'topic_id' must be a string or null, got a list"),
    ({"t": {"next_offsets": None}}, "topic 't': 'next_offsets' must be an object of partition -> offset, got null"),
    ({"t": {"next_offsets": [[0, 1]]}}, "'next_offsets' must be an object of partition -> offset, got a list"),
    ({"t": {"next_offsets": {"x": 1}}}, "topic 't': partition 'x' is not a partition number (0 to 2147483647)"),
    ({"t": {"next_offsets": {"-1": 1}}}, "partition '-1' is not a partition number"),
    ({"t": {"next_offsets": {"01": 1}}}, "partition '01' is not a partition number"),
    ({"t": {"next_offsets": {" 1": 1}}}, "partition ' 1' is not a partition number"),
    ({"t": {"next_offsets": {"1_0": 1}}}, "partition '1_0' is not a partition number"),
    ({"t": {"next_offsets": {"1.0": 1}}}, "partition '1.0' is not a partition number"),
    ({"t": {"next_offsets": {"\u0663": 1}}}, "is not a partition number"),  # an Arabic-Indic 3: int() takes it
    ({"t": {"next_offsets": {str(MAX_PARTITION + 1): 1}}}, "is not a partition number"),
    ({"t": {"next_offsets": {"0": -3}}}, "topic 't', partition 0: the offset must be an integer from 0 to "
                                         f"{MAX_OFFSET}, got -3"),
    ({"t": {"next_offsets": {"0": MAX_OFFSET + 1}}}, f"got {MAX_OFFSET + 1}"),
    ({"t": {"next_offsets": {"0": 1.5}}}, "got 1.5"),
    ({"t": {"next_offsets": {"0": 2.0}}}, "got 2.0"),
    ({"t": {"next_offsets": {"0": "5"}}}, "got '5'"),
    ({"t": {"next_offsets": {"0": None}}}, "got null"),
    ({"t": {"next_offsets": {"0": True}}}, "got true"),
    ({"t": {"next_offsets": {"0": {}}}}, "got an object"),
    ({"t": {"next_offsets": {"0": float("nan")}}}, "got nan"),
    ({"ok": {"next_offsets": {"0": 1}}, "bad": {"next_offsets": {"0": -1}}}, "topic 'bad', partition 0"),
])
def test_every_other_shape_is_named(document, message):
    with pytest.raises(PositionsFormatError) as raised:
        from_json(document)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_a_long_string_is_shortened_in_the_message():
    with pytest.raises(PositionsFormatError) as raised:
        from_json("x" * 500)
    assert len(str(raised.value)) < 120
