"""MM2-style configuration: read a properties file and build the typed model."""

from sparkmirror.config.mm2 import ClusterConfig, FlowConfig, MirrorMakerConfig, load_config

__all__ = ["ClusterConfig", "FlowConfig", "MirrorMakerConfig", "load_config"]
