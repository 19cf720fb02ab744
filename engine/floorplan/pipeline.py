"""Netlist + floorplan -> the pipeline of every FIFO whose two ends sit in different SLRs: the cycles it
adds to the FIFO's latency and the extra depth that keeps it at full throughput. The one place these
two numbers are decided; the exporter writes them (engine/export/constraints.py, the deeper FIFOs of
kernel0) and design.json carries them per FIFO.

The rule, AutoBridge's (Guo et al., FPGA'21; github.com/Licheng-Guo/AutoBridge, its AutoSA benchmark
scripts set `relay_station_count = lambda x: 2 * x`): RELAY_STAGES_PER_BOUNDARY register stages per
SLR boundary the FIFO crosses, and an almost-full FIFO whose threshold covers the round trip: the
writer learns the FIFO is full `latency` cycles late while `latency` words are still on their way,
so the FIFO is deepened by twice the added latency.

The export writes the depth and places the FIFO at its reader; the relay registers themselves are
not in the HLS C++ (AutoBridge rewrites the HLS-generated RTL to insert them; docs/export.md says
why a pass-through HLS process cannot stand in for them here). The latency is charged anyway (the
timed C simulation reads it from design.json), as the pipelined build would pay it.
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.floorplan.netlist import Netlist
from engine.floorplan.solve import Floorplan, crossing_fifos

RELAY_STAGES_PER_BOUNDARY = 2


@dataclass(frozen=True)
class CrossingPipeline:
    source_slr: int
    target_slr: int
    latency: int  # cycles added to the FIFO's write-to-read latency
    extra_depth: int  # words added to the FIFO's depth

    @property
    def boundaries(self) -> int:
        return abs(self.target_slr - self.source_slr)


def crossing_pipeline(source_slr: int, target_slr: int) -> CrossingPipeline:
    """The pipeline of a FIFO written in `source_slr` and read in `target_slr`."""
    latency = RELAY_STAGES_PER_BOUNDARY * abs(target_slr - source_slr)
    return CrossingPipeline(source_slr, target_slr, latency, 2 * latency)


def crossing_pipelines(net: Netlist, plan: Floorplan) -> dict[tuple, CrossingPipeline]:
    """(source node, target node, array) -> the pipeline, for every FIFO between two SLRs."""
    return {(f.source, f.target, f.array): crossing_pipeline(a, b) for f, a, b in crossing_fifos(net, plan)}
