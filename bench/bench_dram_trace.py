"""An export's DRAM address trace -> each port's bursts and the design's DRAM lower bound, beside the
model's latency and the timed C simulation's cycles.

    python bench/bench_dram_trace.py resources/kernels/mm.c -D I=64 -D J=64 -D K=64 --design i-j__i-j.k \
        --param i_t1=16 ... [--layout natural|serialized] [--keep DIR] [--time-limit S]

Independent of the model's DRAM expressions: the design is exported (engine.export.project
.export_project) and built by the timed C simulation with its DRAM log on
(engine/csim/include/systolic_trace.h: EVERY read and write of a bus word through kernel0's m_axi
ports, in program order per port, with the loop invocation it belongs to); this script forms the
bursts from those addresses itself with engine/models/dram.py's `burst_lengths` (consecutive word
addresses, cut at 4 KB pages, at the burst cap and where a loop invocation starts) and charges them
with `port_cycles` (the export's AXI settings; the DDR bank shares of connectivity.cfg). Per port
(and direction): the bits of its bus word (a serialized output's are a full 512-bit word:
engine/export/dram_layout.py), accesses, bursts, mean burst beats, the port's lower bound (port cycles + the AXI
latency of its first access); the max over ports is the design's DRAM lower bound. Printed beside:
the model's latency (PerformanceModel.evaluate) and the timed C simulation's cycles of the same run.
"""
from __future__ import annotations

import argparse
import json
import inspect
import sys
import tempfile
from pathlib import Path

import numpy as np

from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.csim.dram_trace import export_dram_ports, port_banks, shares
from engine.export import export_project
from engine.models.device import load_device
from engine.models.dram import DEFAULT_LAYOUT, burst_lengths, port_cycles
from engine.models.evaluate import PerformanceModel


def read_log(log: Path) -> tuple[np.ndarray, list[tuple[str, int]]]:
    """(int64 rows (port * 2 + dir, word address, invocation), [(port name, word bytes)])."""
    rows = np.fromfile(log, dtype=np.int64).reshape(-1, 3)
    ports = []
    for line in Path(str(log) + ".ports.tsv").read_text().splitlines():
        k, name, word = line.split("\t")
        ports += [("", 1)] * (int(k) + 1 - len(ports))
        ports[int(k)] = (name, int(word))
    return rows, ports


def port_bounds(rows: np.ndarray, ports: list[tuple[str, int]], memory, banks: dict[str, int]) -> list[dict]:
    """Per (port, direction): accesses, bursts, mean beats, port cycles, first-access latency, bound."""
    share = shares(ports, banks, memory)
    out = []
    for channel in np.unique(rows[:, 0]):
        mine = rows[rows[:, 0] == channel]
        port, direction = divmod(int(channel), 2)
        name, word = ports[port]
        breaks = np.flatnonzero(np.diff(mine[:, 2]) != 0) + 1  # a new loop invocation starts a burst
        bursts = burst_lengths(mine[:, 1], word, memory.axi, breaks)
        cycles = port_cycles(bursts, memory.axi, float(share[port]))
        out.append({"port": f"{name} ({'write' if direction else 'read'})", "word": word, "accesses": len(mine),
                    "bursts": len(bursts), "mean": float(np.mean(bursts)) if len(bursts) else 0.0,
                    "cycles": cycles, "latency": memory.axi.latency, "bound": cycles + memory.axi.latency})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel", type=Path)
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--design", required=True)
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V")
    parser.add_argument("--layout", choices=("natural", "serialized"), default=None,
                        help="the export's DRAM layout (needs an exporter with layouts; default: the exporter's)")
    parser.add_argument("--keep", type=Path, help="export into DIR (default: a temporary folder)")
    parser.add_argument("--time-limit", type=float, default=1800, help="seconds the traced run may take")
    args = parser.parse_args(argv)
    defines = dict(d.split("=", 1) for d in args.defines)
    params = {k: int(v) for k, v in (p.split("=", 1) for p in args.param)}
    space = compile_kernel(args.kernel, defines=defines)
    design = space.design(args.design)
    extra = {}
    layouts = "layout" in inspect.signature(export_project).parameters  # the exporter writes either layout
    if args.layout is not None:
        if not layouts:
            if args.layout != "natural":
                print("--layout: this exporter writes the natural layout only", file=sys.stderr)
                return 2
        else:
            extra["layout"] = args.layout
    with tempfile.TemporaryDirectory(prefix="bench-dram-") as scratch:
        project = export_project(space, design, params, (args.keep or Path(scratch)) / "export", force=True,
                                 allow_over_budget=True, **extra, floorplan="none")
        log = Path(scratch) / "dram.log"
        timed = run_timed_csim(project, cache=Path(scratch) / "cache", dram_log=log, time_limit=args.time_limit)
        rows, ports = read_log(log)

        exported = json.loads((project / "design.json").read_text())
        memory = export_dram_ports(project, exported)
        bounds = port_bounds(rows, ports, memory, port_banks(project, [n for n, _ in ports], memory))
    # the model in the layout the export was written in (natural where the exporter has no layouts)
    layout = args.layout or exported.get("layout") or (DEFAULT_LAYOUT if layouts else "natural")
    model_kw = {"layout": layout} if layout and "layout" in inspect.signature(PerformanceModel).parameters else {}
    model = PerformanceModel(space, design, load_device(), **model_kw).evaluate(exported["values"])["latency_cycles"]
    print(f"{'port':14} {'word bits':>9} {'accesses':>12} {'bursts':>12} {'mean beats':>10} {'port cycles':>13} "
          f"{'latency':>8} {'bound':>13}")
    for b in bounds:
        print(f"{b['port']:14} {8 * b['word']:>9} {b['accesses']:>12,} {b['bursts']:>12,} {b['mean']:>10.1f} "
              f"{b['cycles']:>13,.0f} {b['latency']:>8} {b['bound']:>13,.0f}")
    bound = max((b["bound"] for b in bounds), default=0.0)
    print(f"DRAM lower bound {bound:,.0f} cycles; model{' (' + layout + ' layout)' if model_kw else ''} "
          f"{model:,.0f} cycles ({bound / model:.2f}x); timed C "
          f"simulation {timed.cycles:,} cycles ({timed.csim})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
