"""`systolic certify` and `systolic search --certify`: JSON fields, starts, the proof that nothing
fits, and one-line errors."""
from __future__ import annotations

import json

from engine.cli.main import main
from engine.resources import RESOURCES
from engine.search.store import RunStore

SIZES = ["-D", "I=24", "-D", "J=20", "-D", "K=16"]
KEYS = {"design", "params", "latency_cycles", "lower_bound_cycles", "gap", "proven", "boxes_explored",
        "boxes_pruned", "seconds"}


def _device(tmp_path, dsp: int):
    """The bundled U250 file (so every field its schema asks for is there) shrunk to a small device on one die."""
    data = json.loads((RESOURCES / "devices" / "u250.json").read_text())
    resources = {"DSP": dsp, "BRAM18K": 40, "URAM": 1, "LUT": 100000, "FF": 200000}
    data.update(name="small", part="x", usable_ratio=1.0, resources=resources)
    data["slrs"]["dies"] = [{"resources": resources, "banks": list(range(data["memory"]["banks"]))}]
    path = tmp_path / "small.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_json_certificate_from_given_parameters(bundled, tmp_path, capsys):
    code = main(["certify", str(bundled("mm")), *SIZES, "--design", "i-j__i-j.k", "--device", _device(tmp_path, 200),
                 "--param", "i_t1=2", "--param", "j_t1=2", "--param", "k_t1=2", "--param", "i_t2=1",
                 "--param", "j_t2=1", "--param", "k_t2=1", "--gap", "0", "--seconds", "60", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert KEYS <= set(out)
    assert out["proven"] and out["gap"] == 0 and out["improved"] and out["start"] == "--param"
    assert out["lower_bound_cycles"] == out["latency_cycles"]


def test_text_report_starts_from_a_stored_run(bundled, tmp_path, capsys):
    db = str(tmp_path / "runs.sqlite")
    assert main(["search", str(bundled("mm")), *SIZES, "--design", "k__i-j.k", "--method", "random",
                 "--samples", "300", "--db", db]) == 0
    capsys.readouterr()
    assert main(["certify", str(bundled("mm")), *SIZES, "--design", "k__i-j.k", "--db", db, "--seconds", "30"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("k__i-j.k: ") and "stored run 1" in out and "bound" in out and "boxes" in out
    with RunStore(db) as store:  # the certificate is stored with the run its start came from
        stored = store.certificates(1)
    assert list(stored) == ["k__i-j.k"] and stored["k__i-j.k"]["lower_bound_cycles"] > 0


def test_search_certify_stores_the_certificates_with_the_run(bundled, tmp_path, capsys):
    db = str(tmp_path / "runs.sqlite")
    assert main(["search", str(bundled("mm")), *SIZES, "--design", "k__i-j.k", "--method", "random",
                 "--samples", "300", "--db", db, "--json", "--certify", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    with RunStore(db) as store:
        stored = store.certificates(out["run_id"])
    assert stored == {"k__i-j.k": out["certificates"][0]}


def test_nothing_fits_is_reported_as_a_proof(bundled, tmp_path, capsys):
    device = _device(tmp_path, 3)  # an fp32 multiply-add needs 5 DSP
    code = main(["certify", str(bundled("mm")), *SIZES, "--design", "i__i-j.k", "--device", device,
                 "--param", "i_t1=1", "--param", "j_t1=1", "--param", "k_t1=1", "--param", "i_t2=1",
                 "--param", "j_t2=1", "--param", "k_t2=1", "--seconds", "20"])
    assert code == 2
    *steps, err = capsys.readouterr().err.strip().splitlines()  # the proof's progress lines, then the error
    assert all(s.startswith("certify: ") for s in steps) and err.startswith("error: ")
    assert "no configuration fits" in err and "DSP" in err and "proven" in err
    code = main(["certify", str(bundled("mm")), *SIZES, "--design", "i__i-j.k", "--device", device,
                 "--param", "i_t1=1", "--param", "j_t1=1", "--param", "k_t1=1", "--param", "i_t2=1",
                 "--param", "j_t2=1", "--param", "k_t2=1", "--seconds", "20", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 2 and out["fits"] is False and out["proven"] and out["tightest"] == "DSP"


def test_bad_parameters_and_gap_are_one_line_errors(bundled, capsys):
    for extra, phrase in ((["--param", "i_t1=0"], "must be a positive integer"), (["--param", "i_t1=x"], "bad --param"),
                          (["--param", "i_t1=4", "--param", "j_t1=4", "--param", "k_t1=4", "--param", "i_t2=3",
                            "--param", "j_t2=1", "--param", "k_t2=1"], "must divide"),
                          (["--gap", "-1"], "argument --gap: expected a finite number of 0 or more, not -1")):
        assert main(["certify", str(bundled("mm")), *SIZES, "--design", "i-j__i-j.k", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and phrase in err, err


def test_search_certify_adds_certificates(bundled, tmp_path, capsys):
    assert main(["search", str(bundled("mm")), *SIZES, "--design", "k__i-j.k", "--design", "i__i-j.k",
                 "--method", "random", "--samples", "400", "--no-store", "--json", "--certify", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["design"] for c in out["certificates"]] == ["k__i-j.k", "i__i-j.k"]
    assert all(KEYS <= set(c) for c in out["certificates"])
    assert all(c["latency_cycles"] <= d["latency_cycles"] for c, d in zip(out["certificates"], out["designs"]))


def test_search_certify_summary_and_tables_show_the_certified_incumbents(bundled, capsys):
    """A tiny search leaves room for the proof to find better configurations: the design table, the
    JSON best and the summary line then all show the certified incumbent; each proof prints its steps."""
    args = ["search", str(bundled("mm")), *SIZES, "--design", "k__i-j.k", "--design", "i__i-j.k",
            "--method", "random", "--samples", "4", "--no-store", "--certify", "20"]
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    certified = {c["design"]: c["latency_cycles"] for c in out["certificates"]}
    assert {d["design"]: d["latency_cycles"] for d in out["designs"]} == certified
    assert out["best"]["latency_cycles"] == min(certified.values())
    assert "certify 1/2: proving k__i-j.k within 1% of its optimum" in captured.err
    assert "certify 2/2: i__i-j.k: " in captured.err
    assert main(args) == 0
    text = capsys.readouterr().out
    best = min(out["designs"], key=lambda d: d["latency_cycles"])
    assert f"best: {best['design']} at {best['throughput_gops']:.1f} GOP/s" in text.rstrip().splitlines()[-1], text


def test_certify_prints_its_steps(bundled, tmp_path, capsys):
    assert main(["certify", str(bundled("mm")), *SIZES, "--design", "i-j__i-j.k", "--param", "i_t1=2",
                 "--param", "j_t1=2", "--param", "k_t1=2", "--param", "i_t2=1", "--param", "j_t2=1",
                 "--param", "k_t2=1", "--seconds", "20"]) == 0
    err = capsys.readouterr().err
    assert "certify: proving i-j__i-j.k within 1% of its optimum (at most 20 s) ..." in err
    assert "certify: i-j__i-j.k: " in err and " boxes" in err
