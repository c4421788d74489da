"""What `sparkmirror setup` compiles into the record path's jar: the Java project's main sources only
(`pipeline/jvm/src/main/java`), named by their package path; its JUnit tests and POM stay out."""

from __future__ import annotations

from sparkmirror.jars.record_path import _record_path_sources


def test_only_the_main_sources_are_compiled_under_their_package_path() -> None:
    names = [name for name, _ in _record_path_sources()]
    assert "io/sparkmirror/recordpath/MirrorWriter.java" in names
    assert all(name.startswith("io/sparkmirror/recordpath/") and name.endswith(".java") for name in names)
    assert not [name for name in names if name.endswith("Test.java")]
