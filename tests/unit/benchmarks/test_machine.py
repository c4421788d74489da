"""The result's machine entry says whether sparkmirror's driver maps setup's class archive: runs with and
without it are not comparable (its start-up differs by seconds)."""

from __future__ import annotations

from benchmarks.run import machine

from sparkmirror.pipeline import class_archive


def test_the_machine_entry_says_whether_the_driver_maps_setups_class_archive(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARKMIRROR_CACHE", str(tmp_path))
    assert machine()["spark_driver_class_archive"] is False
    archive = class_archive.archive_path(tmp_path)
    archive.parent.mkdir(parents=True)
    archive.touch()
    assert machine()["spark_driver_class_archive"] is True
