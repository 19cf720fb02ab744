"""`systolic model`: one configuration as a report or JSON, many as JSON lines, errors as one line."""
from __future__ import annotations

import json
import subprocess
import sys

from engine.cli.main import main

TABLE_3 = ["--param", "i_t1=129", "--param", "j_t1=130", "--param", "k_t1=64",
           "--param", "i_t2=3", "--param", "j_t2=13", "--param", "k_t2=4"]


def test_json_has_the_documented_fields(bundled, capsys):
    assert main(["model", str(bundled("mm")), "--design", "i-j__i-j.k", *TABLE_3, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("latency_cycles", "prologue", "epilogue", "modules", "dsp", "bram18k", "offchip_bytes",
                "throughput_gops", "fits", "violations"):
        assert key in result
    assert result["dsp"] == 8600 and result["fits"] is True and result["violations"] == []
    # Table 3's j_t2 = 13 drains C one element a cycle (a word may not straddle a PE's box): the
    # drain, not the PE, is this configuration's bottleneck, so latency is the drain's path
    assert result["bottleneck"] == "C_L3_out"
    assert result["latency_cycles"] <= result["prologue"] + result["main"] + result["epilogue"]
    assert result["bottleneck"] == max(result["modules"], key=result["modules"].get)


def test_text_report_marks_the_bottleneck(bundled, capsys):
    assert main(["model", str(bundled("mm")), "--design", "mm [i,j] <[i,j],k>", *TABLE_3]) == 0
    out = capsys.readouterr().out
    assert "<- bottleneck" in out and "DSP" in out and "fits the device" in out
    assert out.count("<- bottleneck") == 1


def test_params_file_gives_one_result_per_line_in_order(bundled, tmp_path, capsys):
    lines = [{"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 8, "j_t2": 8, "k_t2": 8},
             {"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 5, "j_t2": 8, "k_t2": 8},
             {"i_t1": 512, "j_t1": 512, "k_t1": 64, "i_t2": 4, "j_t2": 4, "k_t2": 8}]
    path = tmp_path / "configs.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert main(["model", str(bundled("mm")), "--design", "i-j__i-j.k", "--params-file", str(path)]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(results) == 3
    assert results[0]["fits"] is True
    assert "i_t2=5 must divide i_t1=64" in results[1]["error"]
    assert results[2]["fits"] is False and results[2]["violations"][0].startswith("DSP")


def test_bad_parameters_are_one_line_listing_every_problem(bundled):
    result = subprocess.run([sys.executable, "-m", "engine.cli.main", "model", str(bundled("mm")),
                             "--design", "i-j__i-j.k", "--param", "i_t1=2000", "--param", "j_t1=64",
                             "--param", "k_t1=64", "--param", "i_t2=7", "--param", "j_t2=8", "--param", "k_t2=3"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert "i_t1=2000 is outside its bounds 1..1024" in line and "k_t2=3 must be a power of two" in line


def test_unknown_design_and_device_are_one_line_errors(bundled, capsys):
    assert main(["model", str(bundled("mm")), "--design", "nope", *TABLE_3]) == 2
    assert "no design 'nope'" in capsys.readouterr().err
    assert main(["model", str(bundled("mm")), "--design", "i-j__i-j.k", "--device", "vu9p", *TABLE_3]) == 2
    assert "unknown device 'vu9p'" in capsys.readouterr().err


def test_descriptor_is_printed_on_request(bundled, capsys):
    assert main(["model", str(bundled("mm")), "--design", "i-j__i-j.k", "--descriptor"]) == 0
    descriptor = json.loads(capsys.readouterr().out)
    assert descriptor["version"] == "1.9" and descriptor["design"]["id"] == "i-j__i-j.k"
    assert [m["name"] for m in descriptor["topology"]["modules"]][0] == "PE"


def test_params_file_reports_every_bad_line_and_goes_on(bundled, tmp_path, capsys):
    good = json.dumps({"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 8, "j_t2": 8, "k_t2": 8}).encode()
    path = tmp_path / "configs.jsonl"
    path.write_bytes(b"\n".join([
        good, b"\xff\xfe\x00binary", b'{"i_t1": 64,', b"[1, 2, 3]", b'{"i_t1": 64, "i_t1": 32}',
        b'{"i_t1": 1e40}', b'{"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 5, "j_t2": 8, "k_t2": 8}', b"", good]))
    assert main(["model", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k",
                 "--params-file", str(path)]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(results) == 8 and results[0]["fits"] is True and results[-1] == results[0]
    errors = {r["line"]: r["error"] for r in results[1:-1]}
    assert list(errors) == [2, 3, 4, 5, 6, 7]
    assert errors[2] == f"{path}:2:1: not UTF-8 text"
    assert errors[3].startswith(f"{path}:3: expected a JSON object of integer parameters (Expecting")
    assert "found list" in errors[4] and "'i_t1' appears twice" in errors[5]
    assert "beyond the int64 range" in errors[6] or "must be" in errors[6]
    assert errors[7].startswith(f"{path}:7: ") and "i_t2=5 must divide i_t1=64" in errors[7]
    assert all("\n" not in e for e in errors.values())


def test_a_duplicated_param_is_an_error(bundled, capsys):
    assert main(["model", str(bundled("mm")), "--design", "i-j__i-j.k", *TABLE_3, "--param", "i_t1=64"]) == 2
    err = capsys.readouterr().err
    assert "--param i_t1 is given twice (i_t1=129 and i_t1=64)" in err and err.count("\n") == 1


def test_the_report_estimates_the_clock_and_the_hosts_repacking(bundled, capsys):
    args = ["model", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k", "--param", "i_t1=8",
            "--param", "j_t1=8", "--param", "k_t1=8", "--param", "i_t2=4", "--param", "j_t2=4", "--param", "k_t2=4"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "host: serialize" in out and "DRAM: serialized layout" in out
    assert "floorplanned" in out and "not a Vivado result" in out
    assert main(args + ["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    clock = result["clock_estimate"]
    assert 0 < clock["unfloorplanned_mhz"] <= clock["floorplanned_mhz"] <= result["device"]["clock_mhz"]
    assert result["host"]["serialize_seconds"] > 0 and result["dram"]["layout"] == "serialized"


def test_params_file_control_character_and_deep_lines_are_bad_lines_and_a_bom_is_dropped(bundled, tmp_path, capsys):
    good = json.dumps({"i_t1": 64, "j_t1": 64, "k_t1": 64, "i_t2": 8, "j_t2": 8, "k_t2": 8}).encode()
    path = tmp_path / "configs.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + good + b"\n\x1d\n" + b"[" * 5000 + b"]" * 5000 + b"\r\n \t\n" + good + b"\r\n")
    assert main(["model", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k",
                 "--params-file", str(path)]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(results) == 4 and results[0]["fits"] is True and results[3] == results[0]
    assert results[1]["line"] == 2 and "expected a JSON object of integer parameters" in results[1]["error"]
    assert results[2]["line"] == 3 and "nested deeper than 64 levels" in results[2]["error"]
