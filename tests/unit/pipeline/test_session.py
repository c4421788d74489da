"""The Spark session's settings: loopback only in local mode, where the driver talks to itself; on a cluster
the executors must reach the driver, so its address is Spark's choice or the file's."""

from __future__ import annotations

from sparkmirror.pipeline.session import LOCAL_MODE_DEFAULTS, session_settings


def test_local_mode_binds_the_driver_to_loopback():
    settings = session_settings()
    assert settings["spark.master"].startswith("local[")
    assert {k: settings[k] for k in LOCAL_MODE_DEFAULTS} == LOCAL_MODE_DEFAULTS


def test_a_cluster_master_leaves_the_driver_address_to_spark_or_the_file():
    remote = session_settings({"spark.master": "spark://master:7077"})
    assert not set(LOCAL_MODE_DEFAULTS) & set(remote)
    chosen = session_settings({"spark.master": "spark://master:7077", "spark.driver.host": "10.0.0.5"})
    assert chosen["spark.driver.host"] == "10.0.0.5" and "spark.driver.bindAddress" not in chosen
    assert "spark.jars" in remote  # the record path's jars travel to the executors


def test_the_file_overrides_the_local_defaults():
    assert session_settings({"spark.driver.host": "192.168.1.2"})["spark.driver.host"] == "192.168.1.2"
