"""A `TimedResult` (engine/csim/timed.py) -> the text `systolic csim --timed` prints: a one-line
summary first (cycles beside the model's latency, the values' verdict, the slowest process and
DRAM port), then, with `verbose`, each DRAM port's bursts, the per-process table (busy, stall
in / out, end, iterations, the model's term), the raised IIs and the build."""
from __future__ import annotations


def summary_line(result) -> str:
    """One line: cycles, the model's latency and the difference, values, slowest process, slowest port."""
    model = (f"model {result.model_latency:,.0f} cycles ({result.model_error:+.1%}), bottleneck {result.model_bottleneck}"
             if result.model_latency else "no model latency in design.json")
    port = max(result.dram, key=lambda d: d.cycles, default=None)
    dram = (f"; slowest DRAM port {port.name}: {port.words:,} words in {port.bursts:,} bursts "
            f"(mean {port.mean_burst:.1f} beats), >= {port.cycles:,.0f} cycles" if port else "")
    values = "values PASS" if result.passed else f"values {result.csim}"
    return (f"timed C simulation: {result.cycles:,} cycles{'' if result.complete else ' (incomplete)'}; {model}; "
            f"{values}; slowest process {result.slowest}{dram}")


def format_timed(result, *, verbose: bool = True) -> str:
    lines = [summary_line(result)]
    if result.deadlock:
        lines.append("DEADLOCK: " + "; ".join(result.deadlock))
    if not verbose:
        return "\n".join(lines)
    lines.append(f"values: {result.csim}" + (f"; {result.passes} sequential passes (dataflow region calls), "
                                             "replayed one after the other" if result.passes > 1 else ""))
    for d in result.dram:
        lines.append(f"DRAM {d.name:14} {d.words:>12,} words {d.bursts:>10,} bursts (mean {d.mean_burst:6.1f} beats)"
                     f"  >= {d.cycles:>12,.0f} cycles")
    lines.append(f"{'process':34} {'busy':>12} {'stall in':>12} {'stall out':>12} {'end':>12} {'iterations':>12}"
                 f" {'model term':>12}")
    rows = []
    for p in result.processes:
        rows.append(p)
        rows += p.helpers
    for s in rows:
        mark = "  <- slowest" if s.name == result.slowest else ""
        name = s.name if "/" not in s.name else "  " + s.name.split("/", 1)[1]
        term = getattr(s, "model_term", None)
        lines.append(f"{name:34} {s.busy:>12,} {s.stall_in:>12,} {s.stall_out:>12,} {s.end:>12,} "
                     f"{s.iterations:>12,} {'' if term is None else f'{term:,.0f}':>12}{mark}")
    for note in result.loops:
        lines.append(f"II {note['pragma_ii']} -> {note['ii']} in {note['function']} {note['loop']} "
                     f"(line {note['line']}): {note['reason']}")
    lines.append(f"build {'reused' if result.cached else 'made'} in {result.build_dir}; "
                 + ", ".join(f"{k} {v:.1f} s" for k, v in result.seconds.items()))
    return "\n".join(lines)
