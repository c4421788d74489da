"""Which Java runs the local schema registry, decided without starting one."""

from __future__ import annotations

import pytest

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.testing.schema_registry import JAVA_ENV, MIN_JAVA, java_major, registry_java


def jdk(root, name: str, version: str | None):
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("")
    if version is not None:
        (home / "release").write_text(f'IMPLEMENTOR="x"\nJAVA_VERSION="{version}"\n')
    return home


def test_the_major_version_comes_from_the_jdks_release_file(tmp_path):
    assert java_major(jdk(tmp_path, "t25", "25.0.3")) == 25
    assert java_major(jdk(tmp_path, "o17", "17.0.12")) == 17
    assert java_major(jdk(tmp_path, "none", None)) is None


def test_the_first_jdk_new_enough_is_chosen_and_an_older_one_never(tmp_path, monkeypatch):
    monkeypatch.delenv(JAVA_ENV, raising=False)
    old, new = jdk(tmp_path, "o17", "17.0.12"), jdk(tmp_path, "t25", "25.0.3")
    assert registry_java([old, new]) == new / "bin" / "java"
    with pytest.raises(EmbeddedSetupError, match=f"needs Java {MIN_JAVA} or newer .* set {JAVA_ENV}"):
        registry_java([old, jdk(tmp_path, "bare", None)])


def test_an_explicit_java_wins(tmp_path, monkeypatch):
    monkeypatch.setenv(JAVA_ENV, "/opt/jdk-21/bin/java")
    assert str(registry_java([jdk(tmp_path, "t25", "25.0.3")])) == "/opt/jdk-21/bin/java"
