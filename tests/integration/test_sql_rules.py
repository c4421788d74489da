"""sparkmirror's SQL rules on real brokers and Spark: a filter and masks (JSON field, hashed header, dropped
header) in both trigger modes and across a restart; `validate` naming a broken expression with Spark's message;
`preview` showing what the rules do to real records."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time

import pytest

from sparkmirror.model import KafkaRecord
from sparkmirror.runtime.state import POSITIONS_FILE, read_positions
from sparkmirror.testing.records import produce, read_all

from .conftest import TRIGGER_MODES

CLI_TIMEOUT_S = 180.0
RULES = """\
A->B.sparkmirror.filter = get_json_object(CAST(value AS STRING), '$.region') = 'eu'
A->B.sparkmirror.mask.value = regexp_replace(CAST(value AS STRING), '"email":"[^"]*"', '"email":"***"')
A->B.sparkmirror.mask.header.ssn = sha2(h.value, 256)
A->B.sparkmirror.drop.headers = tmp
"""


def batch(start: int, n: int) -> list[KafkaRecord]:
    now = int(time.time() * 1000)
    return [KafkaRecord(0, -1, f"k{i}".encode(),
                        json.dumps({"id": i, "region": "eu" if i % 3 else "us", "email": f"u{i}@x.org"},
                                   separators=(",", ":")).encode(),
                        (("ssn", f"ssn-{i}".encode()), ("tmp", b"x"), ("keep", b"y")), 1, now + i)
            for i in range(start, start + n)]


def expected(records: list[KafkaRecord]) -> list[tuple]:
    out = []
    for r in records:
        doc = json.loads(r.value)
        if doc["region"] != "eu":
            continue
        doc["email"] = "***"
        ssn = hashlib.sha256(dict(r.headers)["ssn"]).hexdigest().encode()
        out.append((r.key, json.dumps(doc, separators=(",", ":")).encode(), (("ssn", ssn), ("keep", b"y")),
                    r.timestamp))
    return out


@pytest.mark.parametrize("trigger_mode", TRIGGER_MODES)  # the CLI tests below need one mode only
def test_a_filter_and_masks_shape_records_in_both_modes_and_after_a_restart(clusters, create_topic, replicate,
                                                                            tmp_path, unique):
    topic = f"sql-{unique}"
    create_topic("A", topic, 1)
    first, second = batch(0, 30), batch(30, 15)
    produce(clusters.source, topic, first)
    supervisor = replicate(topic, RULES)
    produce(clusters.source, topic, second)
    replicate(topic, RULES)  # a restart: resumes from the stored positions, rules applied again

    copied = [(r.key, r.value, r.headers, r.timestamp) for r in read_all(clusters.target, f"A.{topic}", 1)[0]]
    assert copied == expected(first + second)
    positions = read_positions(tmp_path / "state" / "flows" / "A-to-B" / POSITIONS_FILE)
    assert positions is not None and positions[topic].next_offsets == {0: 45}
    assert supervisor.status().flow("A->B").progress.partitions[(topic, 0)].dropped == 10


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sparkmirror", *args], capture_output=True, text=True,
                          timeout=CLI_TIMEOUT_S)


def test_validate_names_a_rule_spark_cannot_compile_with_sparks_message(mm2_properties):
    path = mm2_properties("x", "A->B.sparkmirror.filter = get_json_object(value, '$.a') = \n"
                               "A->B.sparkmirror.mask.key = length(key)\n"
                               "A->B.sparkmirror.mask.value = no_such_column\n")
    result = cli("validate", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    err = result.stderr
    assert "A->B.sparkmirror.filter: [PARSE_SYNTAX_ERROR]" in err, err
    assert "A->B.sparkmirror.mask.key: the expression is int; it must be binary or string" in err, err
    assert "A->B.sparkmirror.mask.value: [UNRESOLVED_COLUMN" in err and "no_such_column" in err, err


def test_preview_shows_kept_dropped_and_masked_fields_of_real_records(clusters, create_topic, mm2_properties,
                                                                      unique):
    topic = f"preview-{unique}"
    create_topic("A", topic, 1)
    produce(clusters.source, topic, batch(0, 4))
    result = cli("preview", str(mm2_properties(topic, RULES)), "--sample", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "flow A->B: 3 record(s) read, 2 kept, 1 dropped" in out, out
    assert f"{topic}-0@0: dropped" in out and f"{topic}-0@1: kept" in out and f"{topic}-0@3" not in out
    assert ("""value: '{"id":1,"region":"eu","email":"u1@x.org"}' -> '{"id":1,"region":"eu","email":"***"}'"""
            in out), out
    assert f"header:ssn: 'ssn-1' -> '{hashlib.sha256(b'ssn-1').hexdigest()[:56]}..." in out, out
    assert "header:tmp: 'x' -> null" in out


def test_the_heartbeats_topics_a_flow_replicates_pass_the_rules_untouched(spark):
    """A filter on record contents would drop every heartbeat (no value, no headers), and MM2's tools read them."""
    from datetime import datetime

    from sparkmirror.config.sql_rules import SqlRules
    from sparkmirror.pipeline.sql_rules import SOURCE_SCHEMA, shaped

    now = datetime.now()
    rows = [(b"k", b"v", "orders", 0, 0, now, 0, None), (b"hb", None, "heartbeats", 0, 0, now, 0, None),
            (b"hb", None, "C.heartbeats", 0, 0, now, 0, [("x", b"1")])]
    rules = SqlRules(filter="length(value) > 0 AND false", key="'masked'", drop_headers=("x",))
    out = shaped(spark.createDataFrame(rows, SOURCE_SCHEMA), rules, ("heartbeats", "C.heartbeats"))
    got = {r["topic"]: (r["keep"], bytes(r["key"]), r["headers"]) for r in out.collect()}
    assert got["orders"][:2] == (False, b"masked")
    assert got["heartbeats"] == (True, b"hb", None)
    assert got["C.heartbeats"][:2] == (True, b"hb") and [h["key"] for h in got["C.heartbeats"][2]] == ["x"]
