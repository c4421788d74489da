"""Java client settings (as MM2 files hold them) translated into librdkafka's, for the control plane's clients.

Configuration knowledge, so it lives with the configuration: pure except for reading the TLS stores it is
pointed at. What the installed librdkafka build can do is checked apart, in kafka/features.py.
"""

from sparkmirror.config.librdkafka.translation import ROLES, Translation, librdkafka_settings, log_left_out, translate

__all__ = ["ROLES", "Translation", "librdkafka_settings", "log_left_out", "translate"]
