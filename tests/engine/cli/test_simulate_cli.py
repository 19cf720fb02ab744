"""`systolic simulate`: cycles, the per-module table, JSON fields, refused configurations and an
exhausted cycle budget as one-line errors (exit 2)."""
from __future__ import annotations

import json

from engine.cli.main import main

SMALL = ["-D", "I=8", "-D", "J=8", "-D", "K=8", "--design", "i-j__i-j.k", "--param", "i_t1=8", "--param", "j_t1=8",
         "--param", "k_t1=8", "--param", "i_t2=2", "--param", "j_t2=2", "--param", "k_t2=2"]


def test_json_has_cycles_modules_and_deadlock(bundled, capsys):
    assert main(["simulate", str(bundled("mm")), *SMALL, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["deadlock"] is None and result["complete"] is True
    assert result["cycles"] > result["modules"]["PE"]["busy"] > 0
    for name, m in result["modules"].items():
        assert m["busy"] + m["stall_in"] + m["stall_out"] + m["idle"] == result["cycles"], name
    assert result["bottleneck"] in result["modules"]
    assert {"depth", "peak"} <= set(next(iter(result["fifos"].values())))
    assert result["model_latency_cycles"] > 0


def test_text_prints_the_table_and_the_model(bundled, capsys):
    assert main(["simulate", str(bundled("mm")), *SMALL]) == 0
    out = capsys.readouterr().out
    assert "simulated" in out and "<- bottleneck" in out and "stall in" in out and "model latency" in out


def test_a_broken_constraint_is_refused_naming_it(bundled, capsys):
    broken = [a if a != "i_t2=2" else "i_t2=3" for a in SMALL]
    assert main(["simulate", str(bundled("mm")), *broken]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "i_t2=3 must divide i_t1=8" in err and "Traceback" not in err


def test_the_cycle_budget_stops_with_a_clear_message(bundled, capsys):
    assert main(["simulate", str(bundled("mm")), *SMALL, "--max-cycles", "50", "--json"]) == 2
    captured = capsys.readouterr()
    partial = json.loads(captured.out)
    assert partial["complete"] is False and partial["cycles"] <= 50
    assert "cycle budget of 50 cycles exhausted" in captured.err


def test_check_values_c_simulates_the_exported_code(bundled, capsys):
    assert main(["simulate", str(bundled("mm")), *SMALL, "--check-values", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["values"]["passed"] is True and result["values"]["summary"].startswith("PASS")
    assert result["deadlock"] is None


def test_check_values_reports_wrong_values_with_exit_1(bundled, capsys, monkeypatch):
    from engine.export import project

    original = project.kernel_export

    def off_by_one(*args, **kwargs):  # a generator bug: the PEs' accumulators start at 1
        files, dram = original(*args, **kwargs)
        return {name: text.replace("(C_t)(0)", "(C_t)(1)") for name, text in files.items()}, dram

    monkeypatch.setattr(project, "kernel_export", off_by_one)
    assert main(["simulate", str(bundled("mm")), *SMALL, "--check-values"]) == 1
    out = capsys.readouterr().out
    assert "values (C simulation of the exported code): FAIL" in out and "expected" in out


def test_a_state_too_large_for_memory_is_refused_with_the_estimate(bundled, capsys):
    huge = ["-D", "I=65536", "-D", "J=65536", "-D", "K=65536", *SMALL[6:]]  # 8192^3 tiles
    assert main(["simulate", str(bundled("mm")), *huge]) == 2
    err = capsys.readouterr().err
    assert "the simulator would need about" in err and "PB" in err and "of memory is available" in err
    assert err.count("\n") == 1


def test_simulator_estimate_grows_with_tiles_and_is_checked_against_what_is_available(bundled):
    from engine.compiler.descriptor import build_descriptor
    from engine.compiler.design_space import compile_kernel
    from engine.errors import DesignError
    from engine.limits import check_simulator_memory, simulator_state_bytes
    from engine.models.device import load_device
    from engine.models.evaluate import PerformanceModel
    from engine.models.report import evaluate_configuration
    import pytest
    space = compile_kernel(bundled("mm"), defines=["I=64", "J=64", "K=64"])
    model = PerformanceModel(space, space.design("i-j__i-j.k"), load_device("u250"))
    descriptor = build_descriptor(space, model.design, model.architecture)

    def values(t1):
        params = {"i_t1": t1, "j_t1": t1, "k_t1": t1, "i_t2": 2, "j_t2": 2, "k_t2": 2}
        return evaluate_configuration(model, params)["params"]
    small, large = simulator_state_bytes(descriptor, values(32)), simulator_state_bytes(descriptor, values(8))
    assert large > 4 * small  # 2^3 tiles of 16x16 PEs -> 8^3 tiles of 4x4 PEs
    assert check_simulator_memory(descriptor, values(8), available=10 * large) == large
    with pytest.raises(DesignError, match="the simulator would need about"):
        check_simulator_memory(descriptor, values(8), available=large)
