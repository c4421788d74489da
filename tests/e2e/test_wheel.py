"""The wheel (issue 37): `python -m build` makes it from the checkout's files, and the README's install block, run
line by line as written in one bash shell, in a fresh virtualenv and a folder outside the checkout, sets sparkmirror
up and runs its demo. So what the README tells a user to type is what is tested, and the wheel carries everything
`setup` and `demo` need (the POMs, the writer's Java sources, the log settings) without the checkout beside it.

The cache (`SPARKMIRROR_CACHE`) is a new, empty folder: `setup` lays out the jar folders, compiles the writer from
the wheel's own sources and records the class archive from scratch. Only Maven's repository is the checkout's
(`SPARKMIRROR_MAVEN_REPO`, the way the container image test shares it), and pip's cache is the one `make` uses:
CI downloads neither the jars nor pyspark again, which would cost minutes and test Maven Central, not sparkmirror.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.readme_blocks import marked_blocks

from sparkmirror.jars import RECORD_PATH_JAR, cache_dir
from sparkmirror.jars.maven import MAVEN_REPO_ENV
from sparkmirror.testing import watchdog

from .test_container_image import build_context

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
MARKER = "<!-- install: run by tests/e2e/test_wheel.py -->"
BUILD_TIMEOUT_S = 300
BLOCK_TIMEOUT_S = 900  # measured 60 s (pip's cache holding pyspark): venv 4, pip 7, setup 33, demo 16
pytestmark = pytest.mark.timeout(BUILD_TIMEOUT_S + BLOCK_TIMEOUT_S + 60)


def install_block(readme: str) -> list[str]:
    """The command lines of the first fenced block after MARKER."""
    assert MARKER in readme, f"README.md has no {MARKER!r} line before its install block"
    return marked_blocks(readme, MARKER)[0]


def build_wheel(work: Path) -> Path:
    """`python -m build` in a copy of the checkout's files (what a clone has): the checkout itself is left alone."""
    source = build_context(work / "checkout")
    done = watchdog.run([sys.executable, "-m", "build", str(source)], timeout_s=BUILD_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels = list((source / "dist").glob("*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def shell_env(cache: Path) -> dict[str, str]:
    """This process's environment, less whatever points into the checkout or a virtualenv: PATH finds the Python
    that runs the tests (3.11 or newer, as pyproject.toml requires) as `python`, and never the checkout's `.venv`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME") and not k.startswith("SPARKMIRROR_")}
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not Path(p).is_relative_to(REPO)]
    env["PATH"] = os.pathsep.join([str(Path(sys.base_prefix) / "bin"), *path])
    env["SPARKMIRROR_CACHE"] = str(cache)
    env[MAVEN_REPO_ENV] = os.environ.get(MAVEN_REPO_ENV) or str(cache_dir() / "m2")
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(cache_dir() / "pip")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def script(lines: list[str], cwd: Path, logs: Path) -> str:
    """In `cwd`, each line as written, in one shell (the venv's activation carries over), its output in a log of
    its own and its exit status and times in a status file; the first failing line ends the shell. Then what the
    shell ran: bash's hash table remembers the path of each command it executed, and the venv's Python says where
    it imports sparkmirror from."""
    steps = [f"cd {shlex.quote(str(cwd))} || exit 99\n"]
    for i, line in enumerate(lines):
        log, status = shlex.quote(str(logs / f"{i}.log")), shlex.quote(str(logs / f"{i}.status"))
        steps.append(f"__started=$(date +%s.%N)\n{{ {line}\n}} >{log} 2>&1\n__status=$?\n"
                     f'echo "$__status $__started $(date +%s.%N)" >{status}\n'
                     f'[ "$__status" = 0 ] || exit "$__status"\n')
    facts = shlex.quote(str(logs / "facts"))
    where = "import sparkmirror, sys; print('module=' + sparkmirror.__file__); print('prefix=' + sys.prefix)"
    return "".join(steps) + (f'{{ echo "sparkmirror=$(hash -t sparkmirror)"; echo "pip=$(hash -t pip)"; '
                             f"python -c {shlex.quote(where)}; }} >{facts} 2>&1\n")


def outcome(lines: list[str], logs: Path) -> tuple[list[str], list[float]]:
    """Each line's output and seconds, as far as the shell got; fails naming the line that failed or hung."""
    outputs, seconds = [], []
    for i, line in enumerate(lines):
        status = logs / f"{i}.status"
        output = (logs / f"{i}.log").read_text(errors="replace") if (logs / f"{i}.log").exists() else ""
        assert status.exists(), f"`{line}` did not finish within {BLOCK_TIMEOUT_S} s in all:\n{output[-4000:]}"
        code, started, ended = status.read_text().split()
        assert code == "0", f"`{line}` exited {code}:\n{output[-4000:]}"
        outputs.append(output)
        seconds.append(float(ended) - float(started))
    return outputs, seconds


def check_demo(output: str) -> None:
    """The demo's verdict and its table: every partition of the produced count is on B, row by row and in total."""
    produced = re.search(r"^producing ([\d,]+) records .* with (\d+) partitions", output, re.MULTILINE)
    assert produced, output[-4000:]
    records, partitions = produced.group(1), int(produced.group(2))
    rows = {m.group(1): [m.group(2), m.group(3), m.group(4)]
            for m in re.finditer(r"^ *(\d+|total) \| +([\d,]+) \| +([\d,]+) \| (\w+)$", output, re.MULTILINE)}
    assert set(rows) == {*map(str, range(partitions)), "total"}, output[-4000:]
    assert all(a == b and a != "0" and result == "ok" for a, b, result in rows.values()), output[-4000:]
    assert rows["total"] == [records, records, "ok"], output[-4000:]
    assert re.search(r"^throughput: [\d,]+ records/s", output, re.MULTILINE), output[-4000:]
    assert re.search(r"^result: every partition matches$", output, re.MULTILINE), output[-4000:]


def test_the_readme_install_block_sets_up_and_runs_the_demo_from_the_wheel_in_a_fresh_venv(tmp_path):
    lines = install_block(README.read_text())
    assert [line.split()[:2] for line in lines][-2:] == [["sparkmirror", "setup"], ["sparkmirror", "demo"]], lines
    work, logs, cache = tmp_path / "work", tmp_path / "logs", tmp_path / "work" / "cache"
    logs.mkdir()
    try:
        started = time.monotonic()
        wheel = build_wheel(work)
        built_s = time.monotonic() - started
        named = [word for line in lines for word in shlex.split(line) if word.endswith(".whl")]
        assert [Path(word).name for word in named] == [wheel.name], \
            f"the README installs {named}, `python -m build` makes {wheel.name}"
        user = work / "user"  # where the user types the lines, the wheel where the line says it is
        (user / named[0]).parent.mkdir(parents=True)
        shutil.copy2(wheel, user / named[0])
        try:
            done = watchdog.run(["bash", "-c", script(lines, user, logs)], timeout_s=BLOCK_TIMEOUT_S,
                                env=shell_env(cache))
        except subprocess.TimeoutExpired:
            done = None
        outputs, seconds = outcome(lines, logs)
        assert done is not None and done.returncode == 0, done and done.stderr[-3000:]
        print(f"\npython -m build: {built_s:.0f} s; "
              + "; ".join(f"`{line}`: {s:.0f} s" for line, s in zip(lines, seconds, strict=True)))

        facts = dict(line.split("=", 1) for line in (logs / "facts").read_text().splitlines() if "=" in line)
        venv = Path(facts["prefix"])
        assert venv.is_relative_to(user) and not venv.is_relative_to(REPO), facts
        assert facts["sparkmirror"] == str(venv / "bin" / "sparkmirror"), facts  # the sparkmirror that ran
        assert facts["pip"] == str(venv / "bin" / "pip"), facts
        module = Path(facts["module"])
        assert "site-packages" in module.parts and module.is_relative_to(venv), facts
        shebang = (venv / "bin" / "sparkmirror").read_text().splitlines()[:2]  # pip's long-path form has two
        assert any(str(venv / "bin" / "python") in line for line in shebang), shebang

        setup = outputs[-2]
        assert f"record-path: 1 jars in {cache / 'jars' / 'record-path'}" in setup, setup[-3000:]
        assert (cache / "jars" / "record-path" / RECORD_PATH_JAR).is_file()
        for group in ("kafka", "spark-kafka"):
            assert re.search(rf"^{group}: [1-9]\d* jars in {re.escape(str(cache / 'jars' / group))}$", setup,
                             re.MULTILINE), setup[-3000:]
        assert not (cache / "m2").exists(), "Maven resolved into the shared repository, not the new cache"
        assert re.search(rf"^Spark driver class archive: {re.escape(str(cache / 'jvm'))}/\S+\.jsa$", setup,
                         re.MULTILINE), setup[-3000:]
        check_demo(outputs[-1])
    finally:
        shutil.rmtree(work, ignore_errors=True)  # over 1 GB: a venv with pyspark, the jars, the class archive
