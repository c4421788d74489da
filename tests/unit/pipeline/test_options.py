from sparkmirror.pipeline.options import producer_settings, source_options


def test_source_options_prefix_client_settings_and_drop_spark_managed_ones():
    opts = source_options({"bootstrap.servers": "a:1", "security.protocol": "SSL", "auto.offset.reset": "latest",
                           "group.id": "g"}, ["t2", "t1"], max_offsets_per_trigger=100)
    assert opts["kafka.bootstrap.servers"] == "a:1"
    assert opts["kafka.security.protocol"] == "SSL"
    assert "kafka.auto.offset.reset" not in opts and "kafka.group.id" not in opts
    assert opts["subscribe"] == "t1,t2"
    assert opts["startingOffsets"] == "earliest"
    assert opts["includeHeaders"] == "true"
    assert opts["maxOffsetsPerTrigger"] == "100"
    assert opts["kafka.fetch.max.wait.ms"] == "10"


def test_an_explicit_fetch_wait_beats_the_source_default():
    opts = source_options({"bootstrap.servers": "a:1", "fetch.max.wait.ms": "250"}, ["t"])
    assert opts["kafka.fetch.max.wait.ms"] == "250"


def test_producer_settings_force_ordered_durable_writes():
    settings = producer_settings({"bootstrap.servers": "b:1", "acks": "1", "enable.idempotence": "false",
                                  "linger.ms": "50"})
    assert settings["acks"] == "all"
    assert settings["enable.idempotence"] == "true"
    assert settings["linger.ms"] == "50"


def test_batches_stay_below_the_smallest_remote_max_message_bytes():
    assert producer_settings({}, max_message_bytes=2000)["batch.size"] == "1488"
    assert producer_settings({}, max_message_bytes=10_000_000)["batch.size"] == "1000000"
    assert producer_settings({"batch.size": "4096"}, max_message_bytes=10_000_000)["batch.size"] == "4096"
    assert "batch.size" not in producer_settings({})
