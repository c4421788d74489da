"""The Spark session's settings: loopback only in local mode, where the driver talks to itself; on a cluster
the executors must reach the driver, so its address is Spark's choice or the file's."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparkmirror.errors import EmbeddedSetupError
from sparkmirror.pipeline.session import JIT_OPTIONS, LOCAL_MODE_DEFAULTS, session_settings
from sparkmirror.pipeline.submit import SUBMIT_ENTRY_POINT, submit_arguments


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


def _submitted_with_our_jars(scheme: str = "") -> dict[str, str]:
    jars_at = submit_arguments(scheme).index("--jars")
    return {"spark.master": "spark://m:7077", "spark.jars": submit_arguments(scheme)[jars_at + 1]}


def test_spark_submit_has_the_last_word_over_the_file():
    settings = session_settings({"spark.master": "local[2]", "spark.executor.memory": "1g"},
                                submitted={**_submitted_with_our_jars(), "spark.executor.memory": "2g"})
    assert (settings["spark.master"], settings["spark.executor.memory"]) == ("spark://m:7077", "2g")
    assert not set(LOCAL_MODE_DEFAULTS) & set(settings)  # the submitted master is a cluster's


def test_jars_named_as_local_uris_count_as_given():
    assert session_settings(submitted=_submitted_with_our_jars("local"))["spark.master"] == "spark://m:7077"


def test_spark_submit_without_our_jars_is_refused_with_the_fix():
    with pytest.raises(EmbeddedSetupError, match=r"sparkmirror submit-args"):
        session_settings(submitted={"spark.master": "spark://m:7077", "spark.jars": "file:///other.jar"})


def test_submit_arguments_end_with_the_application_file_of_this_package():
    args = submit_arguments()
    assert Path(args[-1]).name == SUBMIT_ENTRY_POINT and Path(args[-1]).is_file()
    assert submit_arguments("local")[-1] == f"local://{args[-1]}"


def _driver_options(real_time_slots: int) -> list[str]:
    return session_settings(real_time_slots=real_time_slots)["spark.driver.extraJavaOptions"].split()


@pytest.mark.parametrize("real_time_slots", [0, 12])
def test_a_driver_uses_the_throughput_collector_and_late_c2_in_either_trigger_mode(real_time_slots):
    driver = _driver_options(real_time_slots=real_time_slots)
    assert [o for o in driver if o.startswith("-XX:+Use") and o.endswith("GC")] == ["-XX:+UseParallelGC"]
    assert set(JIT_OPTIONS.split()) <= set(driver)


def test_the_files_driver_options_replace_the_tuning():
    options = session_settings({"spark.driver.extraJavaOptions": "-XX:+UseZGC"})["spark.driver.extraJavaOptions"]
    assert options == "-XX:+UseZGC"
