"""MM2-style configuration: read a properties file and build the typed model."""

from sparkmirror.config.mm2 import MirrorMakerConfig, load_config
from sparkmirror.config.model import ClusterConfig, FlowConfig

__all__ = ["ClusterConfig", "FlowConfig", "MirrorMakerConfig", "load_config"]
