"""The pure parts of the kill trial's process handling: telling an executor JVM by its command line, and the
application a standalone master runs now."""

from __future__ import annotations

from benchmarks.kill_processes import EXECUTOR_CLASS, executor_of, newest_active_app

EXECUTOR = ["/usr/bin/java", "-cp", "/opt/spark-x/conf/:/opt/pyspark/jars/*", "-Xmx512M",
            "-Dspark.driver.port=41000", EXECUTOR_CLASS, "--driver-url", "spark://CoarseGrainedScheduler@127.0.0.1:41000",
            "--executor-id", "1", "--hostname", "127.0.0.1", "--cores", "1",
            "--app-id", "app-20261123101500-0002", "--worker-url", "spark://Worker@127.0.0.1:40111",
            "--resourceProfileId", "0"]


def test_an_executor_is_known_by_its_class_application_and_id():
    assert executor_of(EXECUTOR) == ("app-20261123101500-0002", "1")


def test_other_processes_are_not_executors():
    assert executor_of(["/usr/bin/java", "org.apache.spark.deploy.worker.Worker", "--app-id", "x"]) is None
    assert executor_of([]) is None
    assert executor_of(EXECUTOR[:EXECUTOR.index("--app-id")]) is None  # no application: not one to kill


def test_the_newest_active_application_is_the_running_driver():
    status = {"activeapps": [{"id": "app-20261123101500-0002", "state": "RUNNING"},
                             {"id": "app-20261123101212-0001", "state": "RUNNING"}],
              "completedapps": [{"id": "app-20261123102000-0003"}]}
    assert newest_active_app(status) == "app-20261123101500-0002"


def test_no_active_application_or_no_master():
    assert newest_active_app({"activeapps": []}) is None
    assert newest_active_app(None) is None
    assert newest_active_app({"activeapps": "broken"}) is None
