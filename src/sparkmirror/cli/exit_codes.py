"""Process exit codes, one place."""

from enum import IntEnum


class ExitStatus(IntEnum):
    SUCCESS = 0
    ERROR = 1
    CONFIG_ERROR = 2
    CLUSTER_UNREACHABLE = 3
    MISMATCH = 4
    AUTHENTICATION_FAILED = 5
    INTERRUPTED = 130
