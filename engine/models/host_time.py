"""Bytes the host repacks -> the seconds it spends on them: the serialized DRAM layout
(engine/export/dram_layout.py) has the host gather every input word into the order the kernel reads
it and scatter every output word back, one bus word (64 bytes: a cache line) at a time.

The rate is a named assumption, not a measurement of the user's host: HOST_COPY_GBYTES_PER_S, the
single-core memory-copy rate of a server CPU of the U250's generation, counted as STREAM counts its
Copy kernel (bytes read plus bytes written). A gather or scatter of whole cache lines from a buffer
larger than the caches runs at about that rate; the figure is a lower bound on the host's time
(allocation, page faults and the natural-layout padding the host does in either layout are not in
it)."""
from __future__ import annotations

# McCalpin's STREAM benchmark, Copy, one thread of an Intel Xeon Skylake-SP / Cascade Lake server
# (the hosts Alveo U250 cards shipped in): about 10-12 GB/s; the lower end is assumed.
HOST_COPY_GBYTES_PER_S = 10.0


def repack_seconds(bytes_moved: float, *, gbytes_per_s: float = HOST_COPY_GBYTES_PER_S) -> float:
    """Seconds to move `bytes_moved` bytes (read + written, STREAM's count) at `gbytes_per_s`."""
    return bytes_moved / (gbytes_per_s * 1e9)


def host_repack(ports: dict[str, dict]) -> dict:
    """Per-port DRAM summary (`{"A": {"layout", "words", "word_bytes"}, ...}`, design.json's "dram") ->
    the host's repacking estimate: bytes and seconds to serialize the inputs and deserialize the
    outputs (each serialized word is read once and written once), and the rate assumed."""
    def moved(kind: str) -> int:
        return sum(2 * p["words"] * p["word_bytes"] for p in ports.values()
                   if p["layout"] == "serialized" and p.get("kind") == kind)
    serialize, deserialize = moved("read"), moved("write")
    return {"serialize_bytes": serialize, "deserialize_bytes": deserialize,
            "serialize_seconds": repack_seconds(serialize), "deserialize_seconds": repack_seconds(deserialize),
            "gbytes_per_s": HOST_COPY_GBYTES_PER_S}
