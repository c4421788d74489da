from sparkmirror.pipeline.failures import root_cause


def test_root_cause_prefers_our_error_raised_in_a_python_worker():
    text = ("org.apache.spark.SparkException: Job aborted\nTraceback (most recent call last):\n"
            "  File \"x.py\", line 1\nsparkmirror.errors.PipelineError: writing t-0@5 to cluster 'B' failed: "
            "too large\n\tat org.apache.spark.api.python...")
    assert root_cause(Exception(text)) == "writing t-0@5 to cluster 'B' failed: too large"
    assert root_cause(Exception("Traceback\nValueError: bad thing\n")) == "ValueError: bad thing"


def test_root_cause_explains_source_data_loss():
    text = ("An exception was raised by the Python Proxy. Return Message: Traceback\n"
            "py4j.protocol.Py4JJavaError: An error occurred while calling o97.collectToPython.\n"
            ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 2 failed 4 times: "
            "org.apache.spark.sql.kafka010.KafkaIllegalStateException: Some data may have been lost\n"
            "Reason: Could not read records in offset [0, 200) for topic partition orders-2\n")
    cause = root_cause(Exception(text))
    assert cause.startswith("records 0..199 of source partition orders-2 are no longer on the source cluster")


def test_root_cause_falls_back_to_the_deepest_named_exception():
    text = ("org.apache.spark.SparkException: Job aborted: "
            "org.apache.kafka.common.errors.TopicAuthorizationException: Not authorized to access topics: [t]\n")
    assert root_cause(Exception(text)) == "TopicAuthorizationException: Not authorized to access topics: [t]"
