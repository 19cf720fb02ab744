"""Design descriptor + configuration + model report -> README.md of an exported project: what the
design is (dataflow, PE array, SIMD, parameters), what the models predict against the device budget
(with a warning when it is over), how to build and simulate it, and which file holds what."""
from __future__ import annotations

from collections import Counter

from engine.compiler.architecture.build import operations_label
from engine.compiler.expressions import evaluate
from engine.floorplan.pipeline import RELAY_STAGES_PER_BOUNDARY
from engine.models.device import RESOURCE_NAMES

_RESOURCES = (("dsp", "DSP"), ("bram18k", "BRAM18K"), ("uram", "URAM"), ("lut", "LUT"), ("ff", "FF"))
_ROLES = {"array_partition": "array partitioning", "latency_hiding": "latency hiding", "simd": "SIMD",
          "data_packing": "data packing"}


def _number(value: float) -> str:
    return f"{value:,.0f}"


def _table(header: tuple[str, ...], rows: list[tuple]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + \
           ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _pe_array(descriptor: dict, values: dict[str, int]) -> tuple[str, int]:
    grid = [int(round(evaluate(e, values))) for e in descriptor["topology"]["pe_grid"]]
    count = 1
    for g in grid:
        count *= g
    return " x ".join(map(str, grid)), count


def _over_budget_note(report: dict) -> list[str]:
    dev = report["device"]
    return ["> **Over the device budget.** The models predict that this configuration does not fit "
            f"{dev['usable_ratio']:.0%} of the {dev['name']}: " + "; ".join(report["violations"] or ["see below"])
            + ". It was exported with `--allow-over-budget`; expect `v++` to fail in placement or routing, "
            "or to miss the clock.", ""]


def _dram_section(dram: dict, interface) -> list[str]:
    """The DRAM layout, each port's layout and words, the pinned AXI settings, the host's repacking."""
    axi, ports, repack = dram["axi"], dram["ports"], dram["host_repack"]
    lines = ["", f"### DRAM layout: {dram['layout']}", ""]
    if dram["layout"] == "serialized":
        lines += ["The host packs each input into a buffer in exactly the order the kernel's DRAM loader reads it "
                  "(tile by tile, row by row, word by word, padding included; data read for several tiles appears "
                  "once per tile), so the DRAM loop of every serialized port reads one incrementing word index and "
                  "Vitis makes maximal bursts; outputs are written in order and unpacked by the host (`serialize_<port>` / "
                  "`deserialize_<port>` in `src/kernel_kernel.h`).", ""]
    else:
        lines += ["The kernel reads and writes the padded row-major arrays; each row segment of a tile is one burst.",
                  ""]
    lines += _table(("port", "layout", "words (m_axi depth)", "bytes", "note"),
                    [(f"`{name}`", p["layout"], f"{p['words']:,}", f"{p['words'] * p['word_bytes']:,}",
                      p.get("reason", "")) for name, p in ports.items()])
    lines += ["", f"Every m_axi interface states max_read_burst_length = max_write_burst_length = "
                  f"{axi.max_burst_beats}, num_read_outstanding = num_write_outstanding = {axi.outstanding}, "
                  f"latency = {axi.latency} (the device file's `memory.axi`) and depth = the port's words."]
    if repack["serialize_bytes"] or repack["deserialize_bytes"]:
        lines += ["", f"Host repacking (estimated at {repack['gbytes_per_s']:g} GB/s, a single core's memory-copy "
                      f"rate, engine/models/host_time.py): serialize {repack['serialize_seconds'] * 1e3:,.3f} ms, "
                      f"deserialize {repack['deserialize_seconds'] * 1e3:,.3f} ms; `./host` prints the measured "
                      "times beside the kernel's."]
    return lines


def _processes(names: list[str], listed: int = 24) -> str:
    """Up to `listed` instance names, else the count per module (`PE x52, A_L2_in x4, A_L3_in`)."""
    if len(names) <= listed:
        return ", ".join(names) or "-"
    counts = Counter(n.split("(")[0] for n in names)
    return ", ".join(f"{m} x{c}" if c > 1 else m for m, c in sorted(counts.items())) + " (design.json lists them)"


def _floorplan_section(fp: dict) -> list[str]:
    """The floorplan (design.json's `floorplan`): process -> SLR, per-SLR utilisation, the boundaries'
    crossings, the pipelined FIFOs and the two clock estimates."""
    lines = ["", "## SLR floorplan", "",
             f"Every process instance is assigned to an SLR (pyomo + SCIP, engine/floorplan; PE array cut along "
             f"`{fp['cut_along'] or '-'}`, each SLR within {fp['cap']:.0%} of what it offers the kernel, solved in "
             f"{fp['solve_seconds']:.1f} s). `floorplan.tcl` adds each instance to the platform's pblock of its SLR; "
             "the Makefile's link runs it before opt_design (`--vivado.prop run.impl_1.STEPS.OPT_DESIGN.TCL.PRE`).",
             ""]
    lines += _table(("SLR", "processes", *(f"{r} used" for r in RESOURCE_NAMES)),
                    [(s["slr"], _processes(s["instances"]),
                      *(f"{s['utilisation'][r]:.1%}" for r in RESOURCE_NAMES)) for s in fp["slrs"]])
    lines += ["", "Crossings (FIFO bits through each SLR boundary, against the wires allowed):", ""]
    lines += _table(("boundary", "wires", "FIFOs", "capacity"),
                    [(f"SLR{b['between'][0]}-SLR{b['between'][1]}", f"{b['wires']:,}", b["fifos"],
                      f"{b['capacity']:,}") for b in fp["boundaries"]])
    crossing = fp["crossing_fifos"]
    if crossing:
        lines += ["", f"{len(crossing)} FIFO(s) cross SLRs; each gets {RELAY_STAGES_PER_BOUNDARY} "
                      "pipeline stages per boundary and twice that many extra words of depth (AutoBridge's rule, "
                      "engine/floorplan/pipeline.py), marked `SLR crossing` in `src/kernel_kernel.cpp`:", ""]
        lines += _table(("stream", "SLRs", "added latency", "added depth"),
                        [(f"`{c['stream']}`", f"{c['from_slr']} -> {c['to_slr']}", c["latency"], c["extra_depth"])
                         for c in crossing])
    clock = fp.get("clock")
    if clock:
        lines += ["", f"Estimated clock: {clock['floorplanned_mhz']:g} MHz with this floorplan "
                      f"({clock['floorplanned_limit']}), {clock['unfloorplanned_mhz']:g} MHz for a plain build "
                      f"({clock['unfloorplanned_limit']}). {clock['note'][0].upper() + clock['note'][1:]}; "
                      "see docs/export.md of Systolic Studio."]
    return lines


def design_readme(descriptor: dict, values: dict[str, int], report: dict, *, platform: str, over_budget: bool,
                  interface=None, dram: dict | None = None, floorplan: dict | None = None) -> str:
    kernel, design, topo = descriptor["kernel"], descriptor["design"], descriptor["topology"]
    dev = report["device"]
    shape, pes = _pe_array(descriptor, values)
    simd = int(round(evaluate(topo["simd"], values)))
    sizes = " ".join(f"{k}={v}" for k, v in kernel["sizes"].items())
    dtypes = sorted({a["dtype"] for a in kernel["arrays"].values()})
    seconds = report["latency_cycles"] / (dev["clock_mhz"] * 1e6)
    lines = [f"# {kernel['name']}: design `{design['id']}`", "",
             f"A systolic array for the loop nest `{kernel['name']}`, exported by Systolic Studio as a Vitis "
             f"project for the {dev['name']} (platform `{platform}`, {dev['clock_mhz']:g} MHz).", ""]
    if over_budget:
        lines += _over_budget_note(report)
    lines += ["## The design", ""]
    lines += _table(("", ""), [
        ("kernel", f"`{kernel['name']}` (`{kernel['path']}`)" + (f", sizes {sizes}" if sizes else "")),
        ("statements", " ".join(f"`{s}`" for s in kernel["statements"])),
        ("dataflow", f"space loops [{', '.join(design['space_loops'])}], time loops "
                     f"[{', '.join(design['time_loops'])}], loop permutation `{design.get('permutation_name', '')}`"),
        ("PE array", f"{shape} = {pes} PEs (`{' x '.join(design['array_shape'])}`)"),
        ("SIMD", f"{simd} lane{'s' if simd != 1 else ''} per PE" +
                 (f" along loop `{design['simd_loop']}`" if design.get("simd_loop") else "")),
        ("element type", ", ".join(dtypes)),
    ])
    roles = {p["name"]: p["role"] for p in descriptor["parameters"]}
    lines += ["", "### Parameters", ""]
    lines += _table(("parameter", "role", "value"),
                    [(f"`{name}`", _ROLES.get(roles.get(name, ""), roles.get(name, "")), value)
                     for name, value in values.items()])
    lines += ["", f"### Predicted performance (Systolic Studio models, {dev['clock_mhz']:g} MHz)", "",
              f"Latency {_number(report['latency_cycles'])} cycles ({seconds * 1e6:,.1f} us) = prologue "
              f"{_number(report['prologue'])} + main {_number(report['main'])} + epilogue "
              f"{_number(report['epilogue'])}; the bottleneck is module `{report['bottleneck']}`. Throughput "
              f"{report['throughput_gops']:,.1f} GOP/s ({operations_label(report['operations'])}). Off-chip traffic {report['offchip_bytes'] / 2**20:,.2f} MiB.",
              ""]
    rows = []
    for key, name in _RESOURCES:
        budget = dev["budget"][name]
        share = f"{report[key] / budget:.1%}" if budget else "-"
        rows.append((name, _number(report[key]), _number(budget), share))
    lines += _table(("resource", "predicted", f"budget ({dev['usable_ratio']:.0%} of the device)", "share"), rows)
    if interface is not None:
        lines += ["", "### Kernel ports", "",
                  f"`{interface.top}` takes one pointer per array, to its data zero-padded to whole tiles "
                  "(row-major) and packed into words; the host pads and unpads.", ""]
        lines += _table(("port", "array", "direction", "shape", "padded shape", "elements per word", "bundle"),
                        [(f"`{p.name}`", p.array, p.direction, " x ".join(map(str, p.shape)),
                          " x ".join(map(str, p.padded_shape)), p.word_elements, f"`{p.bundle}`")
                         for p in interface.ports])
    if dram is not None:
        lines += _dram_section(dram, interface)
    if floorplan is not None:
        lines += _floorplan_section(floorplan)
    lines += ["", "## Build and run (Vitis, XRT)", "",
              "With Vitis and XRT set up (`source <Vitis>/settings64.sh`, `source /opt/xilinx/xrt/setup.sh`):", "",
              "    make all TARGET=sw_emu      # software emulation: minutes",
              "    make check TARGET=sw_emu    # ... and run the host program on it",
              "    make check TARGET=hw_emu    # hardware emulation (RTL simulation): slow",
              "    make all                    # the bitstream (TARGET=hw): hours",
              "    make check                  # run on the board",
              f"    make all PLATFORM=xilinx_u250_xdma_201830_2   # another platform (default `{platform}`)",
              "    make clean", "",
              f"The kernel is built at {dev['clock_mhz']:g} MHz (`FREQ_MHZ` in the Makefile, v++ `--kernel_frequency`; "
              "`make all FREQ_MHZ=250` overrides it).", "",
              "The host program (`./host <xclbin>`) fills the arrays with deterministic values, pads them, runs "
              "the kernel, unpads the results and compares them with the loop nest computed on the CPU "
              "(floating-point results within 1e-3 relative plus 1e-4 absolute); it prints PASS and exits 0 only "
              "when every output element matches.", "",
              "Vitis HLS alone (kernel only, `src/kernel_tb.cpp` as testbench):", "",
              "    vitis_hls -f hls_script.tcl                 # C synthesis",
              "    vitis_hls -f hls_script.tcl -tclargs csim   # C simulation",
              "    vitis_hls -f hls_script.tcl -tclargs cosim  # C synthesis + C/RTL co-simulation", "",
              "## C simulation without Vitis", "",
              "    systolic csim .", "",
              "builds the kernel with g++ and a CPU harness, runs it on random inputs and compares every output "
              "with the loop nest; it exits 0 only when all outputs match.", "",
              "## Files", ""]
    lines += _table(("file", "what it holds"), [
        ("`src/kernel_kernel.cpp`, `src/kernel_kernel.h`", f"the HLS kernel `{interface.top if interface else 'kernel0'}`"
                                                           " and its word types"),
        ("`src/kernel_host.cpp`", "the XRT host program"),
        ("`src/kernel_tb.cpp`", "the C testbench for Vitis HLS csim / cosim"),
        ("`Makefile`", "v++ compile and link, host build, emulation config, `check`"),
        ("`connectivity.cfg`", "v++ link options: one compute unit, a DDR bank per port"),
        ("`hls_script.tcl`", f"Vitis HLS project: part, {dev['clock_mhz']:g} MHz clock, csim / csynth / cosim"),
        ("`design.json`", "the design descriptor, the parameter values, the platform and the predicted report"
                          + (", the floorplan" if floorplan is not None else "")),
        *([("`floorplan.tcl`", "Vivado constraints: each process instance in the pblock of its SLR")]
          if floorplan is not None else []),
    ])
    return "\n".join(lines) + "\n"
