"""sparkmirror: MirrorMaker 2 compatible Kafka replication on Apache Spark."""

__version__ = "0.1.0"
