"""Run a Dockerfile's steps without a container engine: its COPYs from a build context, its RUNs in `sh -c`,
with ARG and ENV as Docker gives them (build arguments override ARG defaults; ENV values are substituted
from what came before). Enough of the format for sparkmirror's own Dockerfile, refused beyond it: the test
then says which instruction it cannot run, instead of running something else than the file says."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from sparkmirror.testing import watchdog

STEP_TIMEOUT_S = 1200.0
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
_IGNORED = {"FROM", "USER", "LABEL", "EXPOSE", "STOPSIGNAL", "VOLUME"}  # nothing to run outside an image


@dataclass(frozen=True)
class Instruction:
    keyword: str
    text: str  # the rest of the instruction, continuation lines joined
    line: int


@dataclass
class Image:
    """What the steps left: the environment a container of the image starts with, and its command."""

    env: dict[str, str]
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # RUN steps left out, as written
    ran: list[str] = field(default_factory=list)


def parse(text: str) -> list[Instruction]:
    """Instructions in order; comments, parser directives and blank lines dropped, `\\` continuations joined."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#") or (not line and not pending):
            continue  # Docker drops comment lines inside a continued instruction too
        if not pending:
            start = number
        pending.append(line.removesuffix("\\").strip())
        if not line.endswith("\\"):
            keyword, _, rest = " ".join(pending).partition(" ")
            instructions.append(Instruction(keyword.upper(), rest.strip(), start))
            pending = []
    return instructions


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """`$NAME` and `${NAME}` replaced by their values (empty when unset), as Docker does in instructions."""
    return _VARIABLE.sub(lambda m: variables.get(m.group(1) or m.group(2), ""), text)


def build(dockerfile: Path, context: Path, build_args: Mapping[str, str], base_env: Mapping[str, str],
          skip: Callable[[str], bool], workdir: Path) -> Image:
    """Run the file's steps. `base_env` stands for the base image's environment, `skip` says which RUN
    commands to leave out (the OS packages), `workdir` is where RUN steps start before any WORKDIR."""
    image = Image(env=dict(base_env))
    args: dict[str, str] = {}
    cwd = workdir
    for ins in parse(dockerfile.read_text()):
        variables = {**image.env, **args}
        if ins.keyword == "ARG":
            name, _, default = ins.text.partition("=")
            args[name] = build_args.get(name, substitute(default, variables))
        elif ins.keyword == "ENV":
            pairs = [word.partition("=") for word in shlex.split(ins.text)]
            image.env.update({name: substitute(value, variables) for name, _, value in pairs})
        elif ins.keyword == "COPY":
            _copy(ins, context, variables)
        elif ins.keyword == "WORKDIR":
            cwd = Path(substitute(ins.text, variables))
        elif ins.keyword == "RUN":
            command = _without_flags(ins.text)
            if skip(command):
                image.skipped.append(command)
                continue
            _run(ins, command, {**image.env, **args}, cwd)
            image.ran.append(command)
        elif ins.keyword in ("ENTRYPOINT", "CMD"):
            setattr(image, ins.keyword.lower(), json.loads(ins.text))  # exec form only, as Spark needs
        elif ins.keyword not in _IGNORED:
            raise NotImplementedError(f"line {ins.line}: {ins.keyword} is not run outside an image")
    return image


def _without_flags(text: str) -> str:
    """A RUN's command without its `--mount=...` flags: a cache mount only keeps caches out of the image."""
    while text.startswith("--"):
        flag, _, text = text.partition(" ")
        if not flag.startswith("--mount=type=cache,"):
            raise NotImplementedError(f"RUN {flag} is not run outside an image")
        text = text.lstrip()
    return text


def _copy(ins: Instruction, context: Path, variables: Mapping[str, str]) -> None:
    words = [substitute(w, variables) for w in shlex.split(ins.text)]
    if any(w.startswith("--") for w in words):
        raise NotImplementedError(f"line {ins.line}: COPY flags are not run outside an image")
    *sources, dest = words
    into_folder = dest.endswith("/") or len(sources) > 1
    for source in sources:
        origin = context / source
        if origin.is_dir():  # Docker copies a folder's contents, not the folder
            shutil.copytree(origin, dest, symlinks=True, dirs_exist_ok=True)
        else:
            target = Path(dest) / origin.name if into_folder else Path(dest)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)


def _run(ins: Instruction, command: str, env: Mapping[str, str], cwd: Path) -> None:
    script = f"cd {shlex.quote(str(cwd))} || exit 1\n{command}"
    done = watchdog.run(["/bin/sh", "-c", script], timeout_s=STEP_TIMEOUT_S, env=env)
    if done.returncode != 0:
        raise AssertionError(f"Dockerfile line {ins.line}: RUN failed (exit {done.returncode}):\n{command}\n"
                             f"{(done.stdout + done.stderr)[-4000:]}")
