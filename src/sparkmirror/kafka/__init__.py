"""The only package that imports confluent_kafka: admin façade and client construction."""
