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


def test_designs_validates_like_the_other_subcommands(bundled, tmp_path, capsys):
    """designs goes through kernel_args.compile_from_args: unused -D names, sizes beyond the limits and a
    malformed --simd-info are one error line with exit 2, the same lines `model` gives."""
    bad_info = tmp_path / "info.json"
    bad_info.write_text('{"kernel": {"reduction": "k"}}')
    for extra, phrase in ((["-D", "ZZZ=4"], "the kernel does not use 'ZZZ'"),
                          (["-D", "I=3000000000"], "the limit is 2^31-1"),
                          (["--simd-info", str(bad_info)], 'each with a "reduction" list')):
        lines = []
        for command in (["designs"], ["model", "--design", "i-j__i-j.k"]):
            assert main([*command, str(bundled("mm")), *extra]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and err.startswith("error: ") and phrase in err, err
            lines.append(err)
        assert lines[0] == lines[1]
