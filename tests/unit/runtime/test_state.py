"""The state dir check and the positions file, with real temp folders: every problem is one StateError line."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest

from sparkmirror.config.mm2 import load_config
from sparkmirror.control.positions import TopicPosition
from sparkmirror.errors import StateError
from sparkmirror.runtime import state
from sparkmirror.runtime.state import check_state_dir, read_positions, write_positions

AS_ROOT = os.geteuid() == 0
needs_non_root = pytest.mark.skipif(AS_ROOT, reason="root reads and writes whatever the permission bits say")
AFRESH = "restore it, or delete it to replicate the flow afresh from auto.offset.reset"
POSITIONS = {"orders": TopicPosition("id-1", {0: 12, 1: 7})}


def flow_dir(state_dir: Path, name: str = "A-to-B") -> Path:
    return state_dir / "flows" / name


def state_error(state_dir: Path, flows: list[Path] | None = None) -> str:
    with pytest.raises(StateError) as raised:
        check_state_dir(state_dir, flows if flows is not None else [flow_dir(state_dir)])
    message = str(raised.value)
    assert "\n" not in message
    return message


@pytest.fixture
def writable_again():
    """Folders and files a test made inaccessible get their permissions back, so tmp_path can be removed."""
    restore: list[Path] = []
    yield restore.append
    for path in restore:
        path.chmod(0o700)


def test_a_missing_state_dir_is_created_and_no_probe_is_left(tmp_path):
    state_dir = tmp_path / "a" / "b" / "state"
    check_state_dir(state_dir, [flow_dir(state_dir)])
    assert state_dir.is_dir() and list(state_dir.iterdir()) == []  # the flow dir is not created by a check


def test_an_existing_well_shaped_state_passes(tmp_path):
    write_positions(flow_dir(tmp_path) / "positions.json", POSITIONS)
    (tmp_path / "flows" / "B-to-A").mkdir()  # a flow that has not written positions yet
    check_state_dir(tmp_path, [flow_dir(tmp_path), flow_dir(tmp_path, "B-to-A"), flow_dir(tmp_path, "C-to-A")])
    assert sorted(p.name for p in flow_dir(tmp_path).iterdir()) == ["positions.json"]


def test_a_state_dir_below_a_regular_file(tmp_path):
    (tmp_path / "file").write_text("x")
    state_dir = tmp_path / "file" / "deeper" / "state"
    assert state_error(state_dir) == (f"state dir {state_dir}: not a directory (a regular file is in the way at "
                                      f"{tmp_path / 'file'}); choose another --state-dir or remove the file")


def test_a_state_dir_that_is_a_regular_file(tmp_path):
    (tmp_path / "state").write_text("x")
    assert state_error(tmp_path / "state") == (
        f"state dir {tmp_path / 'state'}: not a directory (a regular file is in the way at {tmp_path / 'state'}); "
        f"choose another --state-dir or remove the file")


@pytest.mark.parametrize("in_the_way", ["flows", "flows/A-to-B"])
def test_a_file_where_a_flow_folder_belongs(tmp_path, in_the_way):
    (tmp_path / in_the_way).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / in_the_way).write_text("x")
    assert state_error(tmp_path) == (f"{flow_dir(tmp_path)}: not a directory (a regular file is in the way at "
                                     f"{tmp_path / in_the_way}); choose another --state-dir or remove the file")


def test_a_broken_symlink_as_state_dir(tmp_path):
    (tmp_path / "state").symlink_to(tmp_path / "nowhere")
    assert "a file that is not a directory is in the way at" in state_error(tmp_path / "state")


def test_a_folder_where_the_positions_file_belongs(tmp_path):
    (flow_dir(tmp_path) / "positions.json").mkdir(parents=True)
    assert state_error(tmp_path) == (f"{flow_dir(tmp_path) / 'positions.json'}: a directory, not a positions file; "
                                     f"remove it to replicate the flow afresh from auto.offset.reset")


@pytest.mark.parametrize(("content", "problem"), [
    (b"null", "not a positions file: expected an object of topic -> position, got null"),
    (b"[]", "not a positions file: expected an object of topic -> position, got a list"),
    (b'"x"', "not a positions file: expected an object of topic -> position, got 'x'"),
    (b'{"t": null}', "not a positions file: topic 't': expected an object"),
    (b'{"t": {"topic_id": 1, "next_offsets": {}}}', "not a positions file: topic 't': 'topic_id' must be a string"),
    (b'{"t": {"next_offsets": {"0": -1}}}', "not a positions file: topic 't', partition 0: the offset must be"),
    (b'{"t": {"next_offsets": {"p": 1}}}', "not a positions file: topic 't': partition 'p' is not a partition"),
    (b'{"t": {"next_offsets": {"0": "1"}}}', "got '1'"),
    (b"", "empty, not a positions file"),
    (b"  \n", "empty, not a positions file"),
    (b'{"t": {"next_offsets": {"0"', "not valid JSON (Expecting ':' delimiter at line 1 column 28)"),
    (b"\xff\xfe{}", "not a positions file (not UTF-8 text)"),
])
def test_a_positions_file_of_the_wrong_shape(tmp_path, content, problem):
    positions = flow_dir(tmp_path) / "positions.json"
    positions.parent.mkdir(parents=True)
    positions.write_bytes(content)
    message = state_error(tmp_path)
    assert message.startswith(f"{positions}: ") and problem in message and message.endswith(AFRESH)
    with pytest.raises(StateError, match="positions.json: "):  # what FlowRunner._load_positions calls
        read_positions(positions)


def test_positions_round_trip_and_none_before_the_first_write(tmp_path):
    path = flow_dir(tmp_path) / "positions.json"
    assert read_positions(path) is None
    write_positions(path, POSITIONS)
    assert read_positions(path) == POSITIONS
    assert not path.with_suffix(".tmp").exists()


def test_a_write_that_fails_before_the_rename_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = flow_dir(tmp_path) / "positions.json"
    write_positions(path, POSITIONS)
    events: list[str] = []
    monkeypatch.setattr(state.os, "fsync", lambda fd: events.append("fsync"))

    def crash(src, dst):
        events.append("replace")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(state.os, "replace", crash)
    with pytest.raises(StateError) as raised:
        write_positions(path, {"orders": TopicPosition("id-1", {0: 99})})
    assert events == ["fsync", "replace"]  # the new data is on disk before it can become the positions file
    assert read_positions(path) == POSITIONS
    assert str(raised.value) == (f"{path}: cannot write it (No space left on device); give this user write access "
                                 f"to {path.parent} and restart; the flow continues from the positions last written")


def test_a_write_below_a_regular_file(tmp_path):
    (tmp_path / "flows").write_text("x")
    path = flow_dir(tmp_path) / "positions.json"
    with pytest.raises(StateError) as raised:
        write_positions(path, POSITIONS)
    assert str(raised.value) == (f"{path}: not a directory (a regular file is in the way at {tmp_path / 'flows'}); "
                                 f"choose another --state-dir or remove the file")


@needs_non_root
def test_an_unwritable_state_dir(tmp_path, writable_again):
    state_dir = tmp_path / "state"
    state_dir.mkdir(mode=0o555)
    writable_again(state_dir)
    assert state_error(state_dir) == (f"state dir {state_dir}: not writable (Permission denied); choose another "
                                      f"--state-dir or give this user write access to it (chmod u+w)")


@needs_non_root
def test_a_state_dir_that_cannot_be_created(tmp_path, writable_again):
    parent = tmp_path / "locked"
    parent.mkdir(mode=0o555)
    writable_again(parent)
    assert state_error(parent / "state") == (
        f"state dir {parent / 'state'}: cannot create it (Permission denied); choose another --state-dir or give "
        f"this user write access to {parent}")


@needs_non_root
def test_an_unwritable_flow_dir(tmp_path, writable_again):
    write_positions(flow_dir(tmp_path) / "positions.json", POSITIONS)
    flow_dir(tmp_path).chmod(0o555)
    writable_again(flow_dir(tmp_path))
    assert state_error(tmp_path) == (f"{flow_dir(tmp_path)}: not writable (Permission denied); choose another "
                                     f"--state-dir or give this user write access to it (chmod u+w)")


@needs_non_root
def test_an_unreadable_positions_file(tmp_path, writable_again):
    positions = flow_dir(tmp_path) / "positions.json"
    write_positions(positions, POSITIONS)
    positions.chmod(0o000)
    writable_again(positions)
    assert state_error(tmp_path) == (f"{positions}: cannot read it (Permission denied); give this user read access "
                                     f"to it (chmod u+r) or choose another --state-dir")


@needs_non_root
def test_an_unsearchable_flows_folder(tmp_path, writable_again):
    (tmp_path / "flows").mkdir(mode=0o000)
    writable_again(tmp_path / "flows")
    assert state_error(tmp_path) == (f"{flow_dir(tmp_path)}: cannot reach it (Permission denied); choose another "
                                     f"--state-dir or give this user access to it")


def test_the_supervisor_checks_the_state_before_building_any_flow(tmp_path, monkeypatch):
    from sparkmirror.runtime.flows import Flows
    from sparkmirror.runtime.supervisor import Supervisor

    properties = tmp_path / "mm2.properties"
    properties.write_text("clusters = A, B\nA.bootstrap.servers = 127.0.0.1:1\nB.bootstrap.servers = 127.0.0.1:1\n"
                          "A->B.enabled = true\n")
    positions = tmp_path / "state" / "flows" / "A-to-B" / "positions.json"
    positions.parent.mkdir(parents=True)
    positions.write_text('{"t": null}')
    monkeypatch.setattr(Flows, "standing_by", lambda self, flow: pytest.fail("a flow was built first"))
    with pytest.raises(StateError, match=f"^{re.escape(str(positions))}: not a positions file: topic 't'"):
        Supervisor(load_config(properties), tmp_path / "state")


def test_the_acl_ledger_file_of_earlier_versions_is_read_then_renamed(tmp_path: Path):
    from sparkmirror.model import TopicAcl

    ledger = state.AclLedgerFile(tmp_path / "A->B" / state.ACL_LEDGER_FILE)
    assert ledger.load() is None  # no file: nothing to take over
    acls = frozenset({TopicAcl("LITERAL", "A.orders", "User:app", "*", "READ", "ALLOW"),
                      TopicAcl("PREFIXED", "A.ord", "User:ops", "10.0.0.1", "DESCRIBE", "DENY")})
    ledger.path.parent.mkdir()
    ledger.path.write_text(json.dumps({"created_acls": [dataclasses.asdict(a) for a in sorted(acls)]}, indent=1))
    assert ledger.load() == acls
    assert ledger.retire() == f"{ledger.path} renamed to created-acls.json.migrated"
    assert ledger.load() is None
    assert state.AclLedgerFile(ledger.path.with_name("created-acls.json.migrated")).load() == acls


def test_a_damaged_acl_ledger_is_one_line_naming_the_file_and_the_fix(tmp_path: Path):
    path = tmp_path / state.ACL_LEDGER_FILE
    path.write_text('{"created_acls": [{"name": "A.orders"}]}')
    with pytest.raises(StateError, match=re.escape(f"{path}: not an ACL ledger") + ".*delete it"):
        state.AclLedgerFile(path).load()
