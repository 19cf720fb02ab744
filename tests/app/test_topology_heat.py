"""The topology's load colours come from a simulation of the configuration shown when one has run
(the timed C simulation first, then the simulator), else from the model, and the legend says which;
the Simulate button runs engine/sim in a child process, never in the window's."""
from __future__ import annotations

import pytest

from app.models.design_selection import DesignSelection
from app.views import theme
from app.views.qt_topology import KIND_ROLE, heat_source
from app.views.qt_topology_panel import QtTopologyPanel
from engine.compiler.design_space import compile_kernel
from engine.resources import KERNELS

VALUES = {"i_t1": 4, "j_t1": 4, "k_t1": 4, "i_t2": 2, "j_t2": 1, "k_t2": 2}


@pytest.fixture
def panel(qtbot, settle):
    selection = DesignSelection()
    selection.set_space(compile_kernel(KERNELS / "mm.c", defines={"I": 16, "J": 16, "K": 16}))
    selection.select("i-j__i-j.k", VALUES)
    settle(selection)
    panel = QtTopologyPanel(selection)
    qtbot.addWidget(panel)
    yield selection, panel
    panel.shutdown()
    selection.shutdown()


def _pe_fill(view) -> str:
    return next(i.brush().color().name() for i in view.scene().items() if i.data(KIND_ROLE) == "pe")


def test_measured_cycles_replace_the_model_and_the_legend_says_so(panel):
    selection, panel = panel
    view = panel.view
    assert heat_source(selection)[0] == "model" and "from the <b>model</b>" in view.legend.text()
    modules = dict(selection.report["modules"])
    # a simulation (of this configuration) in which the PEs are idle next to a loader
    busy = {name: 1000.0 for name in modules}
    busy["PE"] = 0.0
    selection.set_measured(selection.design.id, selection.full_values(), "simulator", busy)
    assert "from the <b>simulator</b>" in view.legend.text()
    assert _pe_fill(view) == theme.heat_colour(0.0).name()
    # the timed C simulation of the export wins over the simulator
    selection.set_measured(selection.design.id, selection.full_values(), "timed C simulation",
                           {**busy, "PE": 1000.0})
    assert "timed C simulation" in view.legend.text()
    assert _pe_fill(view) == theme.heat_colour(1.0).name()
    # another configuration's measurement does not colour this one
    other = {**selection.full_values(), "i_t2": 1}
    selection.set_measured(selection.design.id, other, "simulator", {"PE": 1.0})
    assert heat_source(selection)[0] == "timed C simulation"


def test_a_full_simulation_colours_the_load_a_reduced_one_does_not(panel, qtbot):
    """Simulate runs in a child process (app/workers/verify_process.py); the reduced problem's busy
    cycles are another problem's, so only the full problem's colour the topology."""
    selection, panel = panel
    with qtbot.waitSignal(panel.verification.finished, timeout=300_000) as reduced:
        assert panel.simulate()
        assert not panel.simulate_button.isEnabled() and "simulating" in panel.sim_status.text()
    assert reduced.args[0]["sizes"] == {"I": 8, "J": 8, "K": 8}  # two 4-wide tiles per loop
    assert heat_source(selection)[0] == "model" and "cycles" in panel.sim_status.text()
    with qtbot.waitSignal(selection.measuredChanged, timeout=300_000):
        assert panel.simulate(full=True)
    source, busy = selection.measured_cycles()
    assert source == "simulator" and busy["PE"] > 0
    qtbot.waitUntil(lambda: panel.simulate_button.isEnabled(), timeout=300_000)
    assert "cycles" in panel.sim_status.text() and "from the <b>simulator</b>" in panel.view.legend.text()
