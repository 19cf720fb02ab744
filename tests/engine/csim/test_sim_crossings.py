"""The cycle simulator charges the SLR crossings of a floorplanned export like the timed C simulation:
the crossing FIFOs (design.json `floorplan.crossing_fifos`, by stream name, mapped to the simulator's
FIFOs through the topology edge the export's plan names each stream after) are deeper and delay their
words by their pipeline latency. A small MM whose floorplan puts three FIFOs across SLRs: the cycles
the crossings add to the simulator equal those they add to the timed C simulation within a cycle per
crossing, and the simulator's total stays within two cycles per crossing of the timed C simulation's;
the model's rule (engine/models/crossings.py: the largest sum of crossing latencies along a path of
the dataflow graph) adds exactly what they add to the timed C simulation; `systolic simulate --project
DIR` reads them from the project, and refuses a project of another configuration in one line."""
from __future__ import annotations

import json

import networkx as nx
import pytest

from engine.cli.main import main
from engine.cli.simulate import project_crossings
from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.export import export_project
from engine.floorplan.pipeline import crossing_pipeline
from engine.models.crossings import crossing_cycles, crossing_path_latency
from engine.resources import KERNELS
from engine.sim.simulate import simulate

SIZES = {"I": "16", "J": "16", "K": "16"}
PARAMS = dict(i_t1=8, j_t1=8, k_t1=8, i_t2=4, j_t2=4, k_t2=4)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    space = compile_kernel(KERNELS / "mm.c", defines=SIZES)
    return export_project(space, space.design("i-j__i-j.k"), PARAMS, tmp_path_factory.mktemp("x") / "mm",
                          floorplan="auto")


def test_simulator_charges_the_crossings_like_the_timed_csim(project, timed_cache):
    design = json.loads((project / "design.json").read_text())
    records = design["floorplan"]["crossing_fifos"]
    crossings = project_crossings(design)
    assert len(crossings) == len(records) > 0
    charged = simulate(design["descriptor"], design["values"], crossings=crossings)
    uncharged = simulate(design["descriptor"], design["values"])
    timed = run_timed_csim(project, cache=timed_cache)
    text = (project / "design.json").read_text()
    for c in records:
        c["latency"] = 0
    (project / "design.json").write_text(json.dumps(design))
    try:
        timed_uncharged = run_timed_csim(project, cache=timed_cache)
    finally:
        (project / "design.json").write_text(text)  # the CLI test reads the project as exported
    added_sim, added_timed = charged.cycles - uncharged.cycles, timed.cycles - timed_uncharged.cycles
    assert added_timed > 0 and added_sim > 0
    assert abs(added_sim - added_timed) <= len(records)
    assert abs(charged.cycles - timed.cycles) <= 2 * len(records)
    assert crossing_cycles(design["descriptor"], design["values"], crossings) == added_timed
    deeper = {k for k in charged.fifo_depths if charged.fifo_depths[k] != uncharged.fifo_depths[k]}
    assert deeper  # the crossing FIFOs' kinds report the extra depth


def test_cli_project_option_reads_the_crossings(project, capsys):
    args = ["simulate", str(KERNELS / "mm.c"), *[a for k, v in SIZES.items() for a in ("-D", f"{k}={v}")],
            "--design", "i-j__i-j.k", *[a for k, v in PARAMS.items() for a in ("--param", f"{k}={v}")], "--json"]
    assert main(args) == 0
    plain = json.loads(capsys.readouterr().out)["cycles"]
    assert main([*args, "--project", str(project)]) == 0
    assert json.loads(capsys.readouterr().out)["cycles"] > plain
    other = [a if a != "k_t2=4" else "k_t2=2" for a in args]
    assert main([*other, "--project", str(project)]) == 2
    err = capsys.readouterr().err
    assert "--project" in err and "k_t2 (4 there, 2 here)" in err and "Traceback" not in err
    assert main([*args, "--project", str(project.parent / "absent")]) == 2
    err = capsys.readouterr().err
    assert "--project: cannot read" in err and "design.json" in err and "Traceback" not in err


def test_longest_crossing_path_not_the_sum():
    """Two crossings on parallel branches count once, two in series add up."""
    graph = nx.MultiDiGraph()
    for src, dst in [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "e")]:
        graph.add_edge(src, dst, array="X")
    one = crossing_pipeline(0, 1)
    assert crossing_path_latency(graph, {}) == 0
    assert crossing_path_latency(graph, {("a", "b", "X"): one, ("a", "c", "X"): one}) == one.latency
    assert crossing_path_latency(graph, {("a", "b", "X"): one, ("d", "e", "X"): crossing_pipeline(0, 2)}) == \
        one.latency + crossing_pipeline(0, 2).latency
    assert crossing_path_latency(graph, {("a", "b", "Y"): one}) == 0  # another array's FIFO: not this edge
