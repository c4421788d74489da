"""The provenance header: which clusters a replicated record has already been written to.

MM2 prevents cycles only through topic names (`A.orders` is never sent back to A). With identity names
a topic looks the same everywhere, so active/active A<->B with MM2 loops forever. sparkmirror therefore
adds one header to every record it writes, `sparkmirror.provenance`, whose value is the comma-separated
list of cluster aliases the record came through, oldest first (`A` after A->B, `A,B` after A->B->C).
A record is never written to a cluster named in that list, nor back to the cluster it is read from.
"""

from __future__ import annotations

from dataclasses import dataclass

PROVENANCE_HEADER = "sparkmirror.provenance"
_SEPARATOR = ","


def provenance_chain(value: bytes | None) -> tuple[str, ...]:
    """The aliases a header value names (an empty or missing header names none)."""
    if not value:
        return ()
    return tuple(a for a in value.decode("utf-8", errors="replace").split(_SEPARATOR) if a)


@dataclass(frozen=True, slots=True)
class ProvenanceRule:
    """Provenance for one flow `source->target`: what to stamp on records and which ones to drop."""

    source: str
    target: str

    @property
    def stamp(self) -> bytes:
        """Header value for a record first written on the source (no provenance header yet)."""
        return self.source.encode("utf-8")

    def next_value(self, value: bytes | None) -> bytes | None:
        """The header value to write on the target, or None when the target has already seen the record."""
        chain = provenance_chain(value)
        if self.target in chain:
            return None
        if not chain or chain[-1] != self.source:
            chain = (*chain, self.source)
        return _SEPARATOR.join(chain).encode("utf-8")
