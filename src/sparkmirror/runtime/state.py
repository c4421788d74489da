"""The state dir on disk: checked before anything runs, and the one place positions files are read and written
(and the ACL ledger files of earlier versions read once, to be taken over into Kafka).

Each problem is a `StateError` of one line: the path, what is wrong, then the fix. The check runs before
any cluster is contacted, so a bad `--state-dir` never surfaces after a batch was replicated whose
positions could not be kept.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from sparkmirror.control import positions as pos
from sparkmirror.control.acl_ledger import AclLedgerFormatError, decode_ledger
from sparkmirror.errors import StateError
from sparkmirror.model import TopicAcl

POSITIONS_FILE = "positions.json"
ACL_LEDGER_FILE = "created-acls.json"  # where versions before the Kafka ledger kept it: taken over once
MIGRATED_SUFFIX = ".migrated"
_ANOTHER_DIR = "choose another --state-dir"
_AFRESH = "restore it, or delete it to replicate the flow afresh from auto.offset.reset"


def check_state_dir(state_dir: Path, flow_dirs: Iterable[Path]) -> None:
    """Create `state_dir` if needed and prove it writable; for each flow dir below it, prove writable the
    deepest part that exists (where its next file goes) and read its positions file if there is one."""
    _make_dir(state_dir)
    _probe_writable(state_dir, "state dir ")
    for flow_dir in flow_dirs:
        deepest = state_dir
        for part in flow_dir.relative_to(state_dir).parts:
            if not _exists(deepest / part):
                break
            deepest = deepest / part
            if not deepest.is_dir():
                raise _in_the_way(flow_dir, deepest)
        if deepest != state_dir:
            _probe_writable(deepest)
        if deepest == flow_dir:
            read_positions(flow_dir / POSITIONS_FILE)


def read_positions(path: Path) -> dict[str, pos.TopicPosition] | None:
    """The positions stored at `path`, or None when the flow has none yet (its first start)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except IsADirectoryError as exc:
        raise StateError(f"{path}: a directory, not a positions file; remove it to replicate the flow afresh "
                         f"from auto.offset.reset") from exc
    except UnicodeDecodeError as exc:
        raise StateError(f"{path}: not a positions file (not UTF-8 text); {_AFRESH}") from exc
    except OSError as exc:
        raise _os_error(path, exc, "cannot read it",
                        f"give this user read access to it (chmod u+r) or {_ANOTHER_DIR}") from exc
    if not text.strip():
        raise StateError(f"{path}: empty, not a positions file; {_AFRESH}")
    try:
        return pos.from_json(json.loads(text))
    except json.JSONDecodeError as exc:
        raise StateError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                         f"{_AFRESH}") from exc
    except pos.PositionsFormatError as exc:
        raise StateError(f"{path}: not a positions file: {exc}; {_AFRESH}") from exc


def write_positions(path: Path, positions: Mapping[str, pos.TopicPosition]) -> None:
    """Replace the positions at `path` atomically: a crash leaves the old file or the new one, never a part."""
    _replace(path, json.dumps(pos.to_json(positions)), "the flow continues from the positions last written")


class AclLedgerFile:
    """Where versions before the Kafka ledger (control/acl_ledger.py) kept a flow's topic ACL ledger: its dir's
    created-acls.json (control/ports.FormerAclLedger), taken over once, then renamed to created-acls.json.migrated.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> frozenset[TopicAcl] | None:
        """The ACLs the file lists; None when there is no file."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise StateError(f"{self.path}: cannot read it ({exc}); {_LEDGER_FIX}") from exc
        try:
            return decode_ledger(text)
        except AclLedgerFormatError as exc:
            raise StateError(f"{self.path}: not an ACL ledger ({exc}); {_LEDGER_FIX}") from exc

    def retire(self) -> str:
        """Rename the file to `<name>.migrated`, so it is never taken over again."""
        retired = self.path.with_name(f"{self.path.name}{MIGRATED_SUFFIX}")
        try:
            os.replace(self.path, retired)
        except OSError as exc:
            raise _os_error(self.path, exc, f"cannot rename it to {retired.name}",
                            f"give this user write access to {self.path.parent}, or delete it (its ACLs are in "
                            f"Kafka now)") from exc
        return f"{self.path} renamed to {retired.name}"


_LEDGER_FIX = ("delete it (sparkmirror then deletes none of the topic ACLs it created before; it creates what "
               "is missing again)")


def _replace(path: Path, text: str, then: str) -> None:
    """Write `text` to `path` atomically: fsync a temporary file beside it, then rename it over `path`."""
    tmp = path.with_suffix(".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())  # on disk before the rename, or a power cut could leave an empty file
        os.replace(tmp, path)
    except OSError as exc:
        raise _os_error(path, exc, "cannot write it",
                        f"give this user write access to {path.parent} and restart; {then}") from exc


def _make_dir(state_dir: Path) -> None:
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parent = next((p for p in state_dir.parents if os.path.lexists(p)), Path("."))
        raise _os_error(state_dir, exc, "cannot create it",
                        f"{_ANOTHER_DIR} or give this user write access to {parent}", "state dir ") from exc


def _probe_writable(directory: Path, label: str = "") -> None:
    """Really write: permission bits say nothing about read-only mounts, ACLs or a full disk."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".sparkmirror-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise _os_error(directory, exc, "not writable",
                        f"{_ANOTHER_DIR} or give this user write access to it (chmod u+w)", label) from exc


def _exists(path: Path) -> bool:
    """Whether `path` exists; a file or an unsearchable folder above it is an error, not a no."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _os_error(path, exc, "cannot reach it", f"{_ANOTHER_DIR} or give this user access to it") from exc
    return True


def _os_error(path: Path, exc: OSError, doing: str, fix: str, label: str = "") -> StateError:
    """One line for an OSError on `path`; a file where a folder belongs is named, whatever the call."""
    blocker = _file_above(path) if isinstance(exc, FileExistsError | NotADirectoryError) else None
    if blocker is not None:
        return _in_the_way(path, blocker, label)
    return StateError(f"{label}{path}: {doing} ({exc.strerror or exc}); {fix}")


def _file_above(path: Path) -> Path | None:
    """`path` or the nearest ancestor that exists, when that is not a directory."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return None if candidate.is_dir() else candidate
    return None


def _in_the_way(path: Path, blocker: Path, label: str = "") -> StateError:
    what = "a regular file" if blocker.is_file() else "a file that is not a directory"
    return StateError(f"{label}{path}: not a directory ({what} is in the way at {blocker}); {_ANOTHER_DIR} "
                      f"or remove the file")
