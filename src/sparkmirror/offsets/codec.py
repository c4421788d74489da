"""MM2's internal-topic records, byte for byte: offset syncs, checkpoints and heartbeats.

MM2 (4.3.1) writes keys and values as Kafka protocol-type structs, big-endian, fields back to back:
STRING is an INT16 byte length then UTF-8; INTn are two's complement. Field names are MM2's.

- offset-syncs key: topic STRING, partition INT32; value: upstreamOffset INT64, offset INT64 (no version).
- checkpoints key: group STRING, topic STRING, partition INT32;
  value: version INT16 (0), upstreamOffset INT64, offset INT64, metadata STRING.
- heartbeats key: sourceClusterAlias STRING, targetClusterAlias STRING; value: version INT16 (0), timestamp INT64.

Decoding follows MM2's deserializers, so records from a newer MM2 still read: any version number is read
with the version-0 layout and trailing bytes are ignored. Unlike MM2 (which substitutes U+FFFD), invalid
UTF-8 is an error: MM2 never writes it, so it means the bytes are not an MM2 record.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from sparkmirror.errors import SparkmirrorError

CHECKPOINT_VERSION = 0
HEARTBEAT_VERSION = 0

_INT16, _INT32, _INT64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")
_MAX_STRING_BYTES = 32767  # Short.MAX_VALUE


class OffsetCodecError(SparkmirrorError, ValueError):
    """An MM2 internal record could not be encoded or decoded; the message names the topic kind and field."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A consumer group's committed source offset and its translation on the target cluster."""

    group: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Proof that the flow source_alias -> target_alias was alive at `timestamp_ms`."""

    source_alias: str
    target_alias: str
    timestamp_ms: int


class StructWriter:
    def __init__(self, what: str) -> None:
        self._what = what
        self._parts: list[bytes] = []

    def _int(self, packer: struct.Struct, field: str, value: int) -> StructWriter:
        try:
            self._parts.append(packer.pack(value))
        except struct.error as exc:
            raise OffsetCodecError(f"cannot encode {self._what}: field '{field}' = {value!r}: {exc}") from exc
        return self

    def int16(self, field: str, value: int) -> StructWriter:
        return self._int(_INT16, field, value)

    def int32(self, field: str, value: int) -> StructWriter:
        return self._int(_INT32, field, value)

    def int64(self, field: str, value: int) -> StructWriter:
        return self._int(_INT64, field, value)

    def string(self, field: str, value: str) -> StructWriter:
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise OffsetCodecError(f"cannot encode {self._what}: field '{field}' has no UTF-8 form: {exc}") from exc
        if len(raw) > _MAX_STRING_BYTES:
            raise OffsetCodecError(f"cannot encode {self._what}: field '{field}' is {len(raw)} bytes of UTF-8, "
                                   f"more than {_MAX_STRING_BYTES}")
        self._parts.append(_INT16.pack(len(raw)))
        self._parts.append(raw)
        return self

    def done(self) -> bytes:
        return b"".join(self._parts)


class StructReader:
    def __init__(self, data: bytes | None, what: str) -> None:
        if data is None:
            raise OffsetCodecError(f"bad {what}: it is null")
        self._data = bytes(data)
        self._pos = 0
        self._what = what

    def _take(self, size: int, field: str) -> bytes:
        left = len(self._data) - self._pos
        if size > left:
            raise OffsetCodecError(f"bad {self._what} ({len(self._data)} bytes): field '{field}' needs {size} "
                                   f"bytes at byte {self._pos}, only {left} left")
        chunk = self._data[self._pos:self._pos + size]
        self._pos += size
        return chunk

    def int16(self, field: str) -> int:
        value: int = _INT16.unpack(self._take(2, field))[0]
        return value

    def int32(self, field: str) -> int:
        value: int = _INT32.unpack(self._take(4, field))[0]
        return value

    def int64(self, field: str) -> int:
        value: int = _INT64.unpack(self._take(8, field))[0]
        return value

    def string(self, field: str) -> str:
        start = self._pos
        size = self.int16(field)
        if size < 0:
            raise OffsetCodecError(f"bad {self._what}: field '{field}' has negative length {size} at byte {start}")
        raw = self._take(size, field)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise OffsetCodecError(f"bad {self._what}: field '{field}' is not UTF-8 ({exc.reason} at byte "
                                   f"{start + 2 + exc.start})") from exc


def encode_checkpoint(checkpoint: Checkpoint) -> tuple[bytes, bytes]:
    """(key, value) of a checkpoints record, as MM2's Checkpoint.recordKey/recordValue (version 0)."""
    key = (StructWriter("checkpoints record key").string("group", checkpoint.group)
           .string("topic", checkpoint.topic).int32("partition", checkpoint.partition))
    value = (StructWriter("checkpoints record value").int16("version", CHECKPOINT_VERSION)
             .int64("upstreamOffset", checkpoint.upstream_offset).int64("offset", checkpoint.downstream_offset)
             .string("metadata", checkpoint.metadata))
    return key.done(), value.done()


def decode_checkpoint(key: bytes | None, value: bytes | None) -> Checkpoint:
    """A checkpoints record, as MM2's Checkpoint.deserializeRecord reads it (any version, v0 layout)."""
    k, v = StructReader(key, "checkpoints record key"), StructReader(value, "checkpoints record value")
    v.int16("version")
    upstream, downstream, metadata = v.int64("upstreamOffset"), v.int64("offset"), v.string("metadata")
    return Checkpoint(k.string("group"), k.string("topic"), k.int32("partition"), upstream, downstream, metadata)


def encode_heartbeat(heartbeat: Heartbeat) -> tuple[bytes, bytes]:
    """(key, value) of a heartbeats record, as MM2's Heartbeat.recordKey/recordValue (version 0)."""
    key = (StructWriter("heartbeats record key").string("sourceClusterAlias", heartbeat.source_alias)
           .string("targetClusterAlias", heartbeat.target_alias))
    value = (StructWriter("heartbeats record value").int16("version", HEARTBEAT_VERSION)
             .int64("timestamp", heartbeat.timestamp_ms))
    return key.done(), value.done()


def decode_heartbeat(key: bytes | None, value: bytes | None) -> Heartbeat:
    """A heartbeats record, as MM2's Heartbeat.deserializeRecord reads it (any version, v0 layout)."""
    k, v = StructReader(key, "heartbeats record key"), StructReader(value, "heartbeats record value")
    v.int16("version")
    timestamp = v.int64("timestamp")
    return Heartbeat(k.string("sourceClusterAlias"), k.string("targetClusterAlias"), timestamp)
