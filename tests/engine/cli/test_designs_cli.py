"""`systolic designs`: the table and the JSON a script reads."""
from __future__ import annotations

import json
import subprocess
import sys

from engine.cli.main import main


def test_json_lists_every_design_with_its_parameters(bundled, capsys):
    assert main(["designs", str(bundled("mm")), "--preset", "small", "--json"]) == 0
    designs = json.loads(capsys.readouterr().out)
    assert len(designs) == 27  # 18 + 9 with SIMD on the space loop k
    first = designs[0]
    assert {"id", "name", "space_loops", "permutation", "simd_loop", "params"} <= set(first)
    for param in first["params"]:
        assert {"name", "bounds", "constraints"} <= set(param)
    by_id = {d["id"]: d for d in designs}
    assert by_id["i-j__i-j.k"]["space_loops"] == ["i", "j"]
    assert by_id["i-j__i-j.k"]["permutation"] == [["i", "j"], ["k"]]


def test_table_has_one_row_per_design(bundled, capsys):
    assert main(["designs", str(bundled("cnn")), "-D", "O=16", "-D", "I=16"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("cnn: 42 designs over loops o=16 h=56 w=56 i=16 p=3 q=3")
    assert out[1].split()[:6] == ["id", "space", "array", "shape", "permutation", "simd"]
    assert len(out) == 3 + 42  # 30 + 12 with SIMD on the space loop i


def test_console_script_runs_in_a_fresh_process(bundled):
    result = subprocess.run([sys.executable, "-m", "engine.cli.main", "designs", str(bundled("mm"))],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "mm [i,j] <[i,j],k>" not in result.stdout  # the table shows ids and columns, not names
    assert "i-j__i-j.k" in result.stdout


def test_preset_sizes_can_be_overridden(bundled, capsys):
    assert main(["designs", str(bundled("mm")), "--preset", "small", "-D", "K=32"]) == 0
    assert capsys.readouterr().out.startswith("mm: 27 designs over loops i=64 j=64 k=32")
