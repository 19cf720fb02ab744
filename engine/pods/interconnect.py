"""Interconnect name + port count -> `Interconnect`: its routing rule, latency and energy per byte.

Three families connect N memory banks to N pods (SOSA section 3.2):
- Crossbar: every bank-pod pair has its own wires; any set of routes in which each pod receives
  one source is admitted; 1 switch stage; energy per byte grows with N (wire length, N^2 cost).
- Benes with a copy network (SOSA's augmented Benes): rearrangeably non-blocking with full
  multicast, so it admits the same route sets as the crossbar; 2 log2 N - 1 stages plus log2 N for
  the copy network.
- Butterfly-k: k butterflies of log2 N stages of 2x2 switches in parallel (the expansion network).
  A route from bank s to pod d has exactly one path in each plane: after stage t it sits at the
  position whose top t+1 bits are d's and whose other bits are s's. Two routes may share a link
  only when they carry the same bank's data (multicast); a route set is admitted when every route
  gets a plane in which it shares no link with a route from another bank. This is the blocking
  that makes the scheduler's job interesting; it comes from the network's structure, nothing else.
  The expansion adds log2 k stages of fan-out/fan-in.

Energy per byte: the technology gives each family's figure at a reference pod count (SOSA Table 1,
256 pods); a multistage network scales it by its number of stages, the crossbar by N.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from engine.errors import EngineError
from engine.pods.technology import INTERCONNECTS, Technology


class InterconnectError(EngineError):
    """An interconnect cannot be built: unknown name, or a port count its structure does not allow."""


@dataclass(frozen=True)
class Interconnect:
    kind: str           # "crossbar", "benes" or "butterfly"
    ports: int
    expansion: int = 1  # butterfly planes

    @property
    def name(self) -> str:
        return f"butterfly-{self.expansion}" if self.kind == "butterfly" else self.kind

    @property
    def blocking(self) -> bool:
        return self.kind == "butterfly"

    def stages(self, ports: int | None = None) -> int:
        """Switch stages a byte crosses one way (ports default to this network's)."""
        n = _log2(ports or self.ports)
        if self.kind == "crossbar":
            return 1
        if self.kind == "benes":
            return max(1, 2 * n - 1) + n
        return max(1, n) + _log2(self.expansion)

    def latency_cycles(self, technology: Technology) -> int:
        """One-way latency through the switch stages."""
        return self.stages() * technology.switch_cycles

    def round_trip_cycles(self, technology: Technology) -> int:
        """A read is a request to the bank and the data back: twice the one-way latency."""
        return 2 * self.latency_cycles(technology)

    def pj_per_byte(self, technology: Technology) -> float:
        reference = technology.interconnect_pj_per_byte_at_reference(self.name)
        ref_ports = technology.interconnect_reference_pods
        if self.ports <= 1:
            return 0.0  # one pod next to its banks: no network
        if self.kind == "crossbar":
            return reference * self.ports / ref_ports
        return reference * self.stages() / self.stages(ref_ports)

    def router(self) -> "Router":
        return Router(self)


def make_interconnect(name: str, ports: int) -> Interconnect:
    """`crossbar`, `benes` or `butterfly-K` (K = 1, 2, 4, 8) over `ports` pods and as many banks."""
    if name not in INTERCONNECTS:
        raise InterconnectError(f"unknown interconnect '{name}' (known: {', '.join(INTERCONNECTS)})")
    if ports < 1:
        raise InterconnectError(f"pod count must be at least 1, got {ports}")
    kind = name.split("-")[0]
    if kind in ("butterfly", "benes") and ports & (ports - 1):
        raise InterconnectError(f"{name} cannot connect {ports} pods: a {kind} network needs a power of two "
                                f"(nearest: {1 << (ports.bit_length() - 1)} or {1 << ports.bit_length()}), "
                                "a crossbar takes any count")
    expansion = int(name.split("-")[1]) if kind == "butterfly" else 1
    return Interconnect(kind, ports, expansion)


def butterfly_links(ports: int, source: int, dest: int) -> tuple[int, ...]:
    """The links a route from bank `source` to pod `dest` uses in one butterfly plane: link ids
    `stage * ports + position`, the position after stage t having d's top t+1 bits and s's others."""
    n = _log2(ports)
    links = []
    for t in range(n):
        low = n - 1 - t
        position = ((dest >> low) << low) | (source & ((1 << low) - 1))
        links.append(t * ports + position)
    return tuple(links)


@dataclass
class Router:
    """The routes of one time slice on one interconnect: add routes one at a time; `route` commits
    and returns the plane used, or None (and changes nothing) when the network cannot carry it."""
    network: Interconnect
    receivers: dict[int, int] = field(default_factory=dict)     # pod -> bank it receives from
    planes: list[list[int]] = field(default_factory=list)       # link -> source bank, -1 free
    routes: list[tuple[int, int, int]] = field(default_factory=list)  # (bank, pod, plane)

    def __post_init__(self):
        if self.network.blocking and not self.planes:
            n = _log2(self.network.ports)
            self.planes = [[-1] * (max(n, 1) * self.network.ports) for _ in range(self.network.expansion)]

    def can_route(self, source: int, dest: int) -> int | None:
        held = self.receivers.get(dest)
        if held is not None:
            return 0 if held == source else None
        if not self.network.blocking:
            return 0
        links = _links(self.network.ports, source, dest)
        for plane_id, plane in enumerate(self.planes):
            if all(plane[link] == -1 or plane[link] == source for link in links):
                return plane_id
        return None

    def route(self, source: int, dest: int) -> int | None:
        plane_id = self.can_route(source, dest)
        if plane_id is None or self.receivers.get(dest) == source:
            return plane_id
        self.commit(source, dest, plane_id)
        return plane_id

    def commit(self, source: int, dest: int, plane_id: int) -> None:
        self.receivers[dest] = source
        self.routes.append((source, dest, plane_id))
        if self.network.blocking:
            plane = self.planes[plane_id]
            for link in _links(self.network.ports, source, dest):
                plane[link] = source


_LINK_CACHE: dict[int, dict[tuple[int, int], tuple[int, ...]]] = {}


def _links(ports: int, source: int, dest: int) -> tuple[int, ...]:
    table = _LINK_CACHE.setdefault(ports, {})
    key = (source, dest)
    links = table.get(key)
    if links is None:
        links = table[key] = butterfly_links(ports, source, dest) if ports > 1 else (0,)
    return links


def _log2(value: int) -> int:
    return int(math.log2(value)) if value > 1 else 0
