"""read_properties / parse_properties on files that cannot be used: each is a ConfigError naming the file."""

from __future__ import annotations

import pytest
from tests.unit.properties_text import A_TO_B

from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.properties import parse_properties, read_properties
from sparkmirror.errors import ConfigError

BASE = A_TO_B


def problems_of(path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


def test_bytes_that_are_not_utf8_name_the_file_line_and_byte(tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_bytes(BASE.encode() + "A->B.groups = café\n".encode("latin-1"))
    assert problems_of(path) == [f"cannot read {path}: not UTF-8 text (byte 0xe9 at line 6, column 18); "
                                 f"save the file as UTF-8"]


def test_binary_garbage_is_a_config_error(tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_bytes(bytes(range(256)) * 4)
    [problem] = problems_of(path)
    assert problem.startswith(f"cannot read {path}: not UTF-8 text (byte 0x80 at line 2, column")


def test_garbage_text_is_a_config_error(tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_text("lorem ipsum dolor\n%%% ::: ===\n\x00\x01\n", encoding="utf-8")
    assert problems_of(path) == ["clusters: missing; list the cluster aliases, e.g. 'clusters = A, B' "
                                 "(mm2.properties)"]


def test_a_missing_file_or_a_directory_is_a_config_error(tmp_path):
    missing = tmp_path / "gone.properties"
    assert problems_of(missing) == [f"cannot read {missing}: No such file or directory"]
    assert problems_of(tmp_path) == [f"cannot read {tmp_path}: Is a directory"]


HEAD = "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\n"


@pytest.mark.parametrize("cut", range(1, len("A->B.enabled") + 1))
def test_a_file_cut_inside_its_last_key_is_refused(cut):
    key = "A->B.enabled"[:cut]
    with pytest.raises(ConfigError) as info:
        parse_properties(HEAD + key, "mm2.properties")
    assert info.value.problems == [f"{key}: the last line has no value and no line break: the file looks cut "
                                   f"off mid-write; complete the line (mm2.properties:4)"]


def test_a_file_cut_after_a_continuation_or_a_separator_is_refused():
    for tail, what in (("A->B.topics = orders, \\", "ends in a '\\' continuation"),
                       ("A->B.topics =", "has no value"), ("A->B.topics ", "has no value")):
        with pytest.raises(ConfigError) as info:
            parse_properties(BASE + tail, "mm2.properties")
        assert info.value.problems == [f"A->B.topics: the last line {what} and no line break: the file looks cut "
                                       f"off mid-write; complete the line (mm2.properties:6)"], tail


def test_complete_files_without_a_final_line_break_still_load():
    for text in (BASE.rstrip("\n"), BASE + "# a comment", BASE + "spark.app.name = mirror\\\\", BASE + "   "):
        config = MirrorMakerConfig.from_properties(parse_properties(text, "mm2.properties"), env={})
        assert [f.name for f in config.enabled_flows()] == ["A->B"], text
    bare = parse_properties(BASE + "A->B.note\n", "mm2.properties")  # Java: a bare key means an empty value
    assert bare.values["A->B.note"] == ""


def test_read_properties_keeps_lines_for_messages(tmp_path):
    path = tmp_path / "mm2.properties"
    path.write_text(BASE, encoding="utf-8")
    props = read_properties(path)
    assert props.where("A->B.topics") == "mm2.properties:5"
