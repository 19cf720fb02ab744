"""`systolic pods ...` through the real entry point: JSON shapes, PNGs, one-line errors with exit 2."""
import json

import pytest

from engine.cli.main import main
from engine.pods.technology import DEFAULT_TECHNOLOGY

NET = {"name": "tiny", "workloads": [
    {"name": "c1", "tags": ["conv"], "params": {"i": 3, "o": 16, "r": 12, "c": 12, "p": 3, "q": 3}},
    {"name": "c2", "tags": ["conv"], "params": {"i": 16, "o": 24, "r": 6, "c": 6, "p": 3, "q": 3}},
    {"name": "fc", "tags": ["mm"], "params": {"i": 1, "j": 10, "k": 864}}]}


@pytest.fixture
def network(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(NET))
    return path


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_schedule_json_and_gantt(tmp_path, network, capsys):
    png = tmp_path / "g.png"
    out = run_json(capsys, ["pods", "schedule", str(network), "--pods", "16", "--array", "8x8",
                            "--interconnect", "butterfly-2", "--png", str(png), "--json"])
    assert {"effective_tops", "utilization", "energy_j"} <= out.keys()
    assert set(out["energy_j"]) == {"mac", "sram", "interconnect", "dram"}
    assert 0 < out["utilization"] <= 1 and png.stat().st_size > 1000


def test_scale_and_interconnect_json(tmp_path, network, capsys):
    rows = run_json(capsys, ["pods", "scale", "--network", str(network), "--png", str(tmp_path / "s.png"), "--json"])
    assert [r["array"] for r in rows] == ["512x512", "256x256", "128x128", "64x64", "32x32", "16x16"]
    assert set(rows[0]) == {"array", "pods", "peak_tops", "utilization", "effective_tops", "watts"}
    table = run_json(capsys, ["pods", "interconnect", "--network", str(network), "--pods", "16", "--array",
                              "8x8", "--json"])
    assert [r["interconnect"] for r in table][:2] == ["butterfly-1", "butterfly-2"]
    assert set(table[0]) == {"interconnect", "busy_pods", "cycles_per_tile_op", "mw_per_byte"}


def test_tenancy_json_and_the_sosa_benchmark_flag(tmp_path, network, capsys):
    second = tmp_path / "other.json"
    second.write_text(json.dumps({**NET, "name": "other"}))
    out = run_json(capsys, ["pods", "tenancy", "--network", str(network), "--network", str(second), "--pods", "16",
                            "--array", "8x8", "--json"])
    assert out["workloads"] == ["tiny", "other"] and out["joint_cycles"] <= out["sequential_cycles"]
    assert out["sequential_cycles"] == sum(out["alone_cycles"]) and out["gain"] >= 1
    assert set(out["tried"]) == {"interleaved", "tiny first", "other first"}
    assert main(["pods", "scale", "--sosa-benchmarks", "--network", str(network)]) == 2
    assert "give it or --network, not both" in capsys.readouterr().err


def test_granularity_writes_a_heat_map(tmp_path, network, capsys):
    png = tmp_path / "h.png"
    assert main(["pods", "granularity", "--network", str(network), "--sizes", "8,16,32", "--png", str(png)]) == 0
    assert "best:" in capsys.readouterr().out and png.stat().st_size > 1000


@pytest.mark.parametrize("argv, message", [
    (["pods", "schedule", "NET", "--pods", "48", "--interconnect", "butterfly-2"],
     "butterfly-2 cannot connect 48 pods: a butterfly network needs a power of two"),
    (["pods", "schedule", "NET", "--pods", "256", "--array", "256x256"], "over the technology's 400 W budget"),
    (["pods", "schedule", "NET", "--array", "32by32"], "expected ROWSxCOLS"),
    (["pods", "schedule", "NET", "--technology", "TECH"], "'mac_pj' must be positive, got -0.4"),
    (["pods", "granularity", "--network", "NET", "--sizes", "4096"], "no array shape fits the power budget"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, network, capsys, argv, message):
    tech = json.loads(DEFAULT_TECHNOLOGY.read_text())
    tech["mac_pj"] = -0.4
    (tmp_path / "tech.json").write_text(json.dumps(tech))
    argv = [str(network) if a == "NET" else str(tmp_path / "tech.json") if a == "TECH" else a for a in argv]
    assert main(argv + ["--png", str(tmp_path / "x.png")] if argv[1] != "interconnect" else argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_scale_and_interconnect_print_a_line_per_step(tmp_path, network, capsys):
    assert main(["pods", "scale", "--network", str(network), "--arrays", "32,16", "--png", str(tmp_path / "s.png"),
                 "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("pods scale: 1/2 32x32 x ") and ", tiny: utilisation " in err[0]
    assert err[1].startswith("pods scale: 2/2 16x16 x ") and err[1].endswith(" s)")
    assert main(["pods", "interconnect", "--network", str(network), "--pods", "16", "--array", "8x8", "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"pods interconnect: 1/{len(err)} butterfly-1, tiny: busy pods ")
    assert err[-1].startswith(f"pods interconnect: {len(err)}/{len(err)} ")
