"""AXI timing in the timed C simulation: the recorder's bursts are those the logged DRAM addresses
form (engine/models/dram.py `burst_lengths`), and a DRAM loop that reads one bus word per row is
paced at `cycles_per_beat(1)` where the same design reading whole rows is not."""
from __future__ import annotations

import dataclasses
import json
import shutil

import numpy as np
import pytest

from engine.compiler.design_space import compile_kernel
from engine.csim import run_timed_csim
from engine.csim.dram_trace import export_dram_ports, port_banks, shares
from engine.export import export_project
from engine.models.device import load_device
from engine.models.dram import burst_lengths, cycles_per_beat, port_cycles
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.resources import KERNELS

# MM 64x16x512 on a column of 2x2-PE blocks, SIMD 8: A and B are read once per tile of k; with
# k_t1=16 every row of a tile is one 64-byte word (a single-beat burst each), with k_t1=512 the
# tile is whole rows, one address range
SIZES = {"I": "64", "J": "16", "K": "512"}
ONE_WORD_PER_ROW = {"i_t1": 16, "j_t1": 16, "k_t1": 16, "i_t2": 2, "j_t2": 2, "k_t2": 8}
WHOLE_ROWS = {**ONE_WORD_PER_ROW, "k_t1": 512}


@pytest.fixture(scope="module")
def exports(tmp_path_factory, timed_cache):
    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    folder = tmp_path_factory.mktemp("dram")
    space = compile_kernel(KERNELS / "mm.c", defines=SIZES)
    design = space.design("i-j__i-j.k")
    # the natural layout: the serialized one would make every DRAM loop one address range
    return {name: export_project(space, design, params, folder / name, layout="natural", floorplan="none")
            for name, params in (("rows", ONE_WORD_PER_ROW), ("whole", WHOLE_ROWS))}, timed_cache


def _unpaced(project):
    """The export's memory system with so many outstanding bursts that no burst length paces a port."""
    memory = export_dram_ports(project, json.loads((project / "design.json").read_text()))
    return dataclasses.replace(memory, axi=dataclasses.replace(memory.axi, outstanding=10 ** 6))


def test_the_recorders_bursts_are_those_the_logged_addresses_form(exports, tmp_path):
    projects, cache = exports
    project = projects["rows"]
    log = tmp_path / "dram.log"
    result = run_timed_csim(project, cache=cache, dram_log=log)
    rows = np.fromfile(log, dtype=np.int64).reshape(-1, 3)  # (port * 2 + dir, word address, invocation)
    names = [line.split("\t") for line in (tmp_path / "dram.log.ports.tsv").read_text().splitlines()]
    memory = export_dram_ports(project, json.loads((project / "design.json").read_text()))
    share = shares([(n, int(w)) for _, n, w in names], port_banks(project, [n for _, n, _ in names], memory), memory)
    recorded = {d.name: d for d in result.dram}
    assert set(recorded) == {"A (read)", "B (read)", "C (write)"}
    for channel in np.unique(rows[:, 0]):
        mine = rows[rows[:, 0] == channel]
        port, direction = divmod(int(channel), 2)
        word = int(names[port][2])
        bursts = burst_lengths(mine[:, 1], word, memory.axi, np.flatnonzero(np.diff(mine[:, 2]) != 0) + 1)
        total = recorded[f"{names[port][1]} ({'write' if direction else 'read'})"]
        assert (total.words, total.bursts) == (len(mine), len(bursts))
        assert total.cycles == pytest.approx(port_cycles(bursts, memory.axi, float(share[port])))
    # one 64-byte word per row of A: every access its own burst
    assert recorded["A (read)"].bursts == recorded["A (read)"].words == 64 * 512 // 16


def test_a_loop_reading_one_word_per_row_is_paced_at_the_cycles_of_a_single_beat_burst(exports):
    projects, cache = exports
    rows = run_timed_csim(projects["rows"], cache=cache)
    rows_unpaced = run_timed_csim(projects["rows"], cache=cache, memory=_unpaced(projects["rows"]))
    whole = run_timed_csim(projects["whole"], cache=cache)
    whole_unpaced = run_timed_csim(projects["whole"], cache=cache, memory=_unpaced(projects["whole"]))
    assert rows.passed and whole.passed
    a = next(d for d in rows.dram if d.name == "A (read)")
    memory = _unpaced(projects["rows"])
    single = cycles_per_beat(1, dataclasses.replace(memory.axi, outstanding=16))
    assert single > 4
    # the DRAM-bound design runs at A's single-beat bursts (one pace less per 16-word invocation)
    assert rows.cycles == pytest.approx(a.words * single, rel=0.08)
    assert rows.cycles > 2.5 * rows_unpaced.cycles and rows.cycles > 2.5 * whole.cycles
    # whole rows: bursts of 64 beats, which the port sustains at a word a cycle; the reads no longer
    # pace the design (C's 128 words, written a PE block at a time, still pay for short bursts)
    assert min(d.mean_burst for d in whole.dram if d.name != "C (write)") == 64
    assert whole.process("A_L3_in").end == pytest.approx(whole_unpaced.process("A_L3_in").end, rel=0.1)
    assert whole.cycles == pytest.approx(whole_unpaced.cycles, rel=0.1)


def test_the_serialized_layout_turns_the_one_word_rows_into_long_bursts(exports, tmp_path):
    projects, cache = exports
    space = compile_kernel(KERNELS / "mm.c", defines=SIZES)
    serialized = run_timed_csim(export_project(space, space.design("i-j__i-j.k"), ONE_WORD_PER_ROW,
                                               tmp_path / "serialized", floorplan="none"), cache=cache)
    natural = run_timed_csim(projects["rows"], cache=cache)
    assert serialized.passed
    # each invocation reads its tile's 16 words as one run; the model charges the same design alike
    assert all(d.mean_burst >= 8 for d in serialized.dram if d.name != "C (write)")
    assert natural.cycles > 2.5 * serialized.cycles
    model = shared_model(space, space.design("i-j__i-j.k"), load_device())
    assert serialized.cycles == pytest.approx(float(model.evaluate(ONE_WORD_PER_ROW)["latency_cycles"]), rel=0.05)
