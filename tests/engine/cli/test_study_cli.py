"""`systolic study NAME`: runs a study into a folder and prints its summary; refuses a non-empty folder
without --force and unknown study names, with one-line errors."""
from __future__ import annotations

import argparse
import sys

from engine.cli import main as cli_main
from engine.cli import study
from engine.errors import EngineError

SMALL = ["-D", "I=64", "-D", "J=64", "-D", "K=64"]


def systolic_study(argv: list[str]) -> int:
    """`systolic study ...` through the real entry point once `study` is registered there."""
    if "study" in cli_main.SUBCOMMANDS:
        return cli_main.main(["study", *argv])
    parser = argparse.ArgumentParser(prog="systolic study")
    study.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return study.run(args)
    except EngineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def test_runs_a_study_and_prints_its_summary(tmp_path, capsys):
    out = tmp_path / "lm"
    code = systolic_study(["latency-model", "-o", str(out), *SMALL, "--designs", "i-j__i-j.k", "k__i-j.k",
                           "--seconds", "0.1"])
    assert code == 0
    captured = capsys.readouterr()
    assert "paper: 9%" in captured.out and f"written to {out}" in captured.out
    # the estimate follows the options (2 designs x 2 runs x 0.1 s), then the progress
    assert "study latency-model: 2 designs x 2 runs x 0.1 s x 1 seed(s): about 1 s" in captured.err
    assert "i-j__i-j.k" in captured.err
    assert sorted(p.name for p in out.iterdir()) == ["latency_model.csv", "latency_model.png", "summary.txt"]
    assert len((out / "latency_model.csv").read_text().splitlines()) == 1 + 2 * 2


def test_non_empty_output_folder_needs_force(tmp_path, capsys):
    (tmp_path / "keep.txt").write_text("mine")
    assert systolic_study(["mutation", "-o", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "not empty" in err and "--force" in err and err.count("\n") == 1
    code = systolic_study(["mutation", "-o", str(tmp_path), "--force", "--quiet", *SMALL, "--designs", "k__i-j.k",
                           "--samples", "600", "--seconds", "0.1"])
    assert code == 0
    assert (tmp_path / "keep.txt").read_text() == "mine" and (tmp_path / "mutation.csv").exists()


def test_unknown_study_and_bad_options_are_one_line_errors(tmp_path, capsys):
    for argv, phrase in ((["nope"], "unknown study 'nope'"),
                         (["mutation", "--methods", "random"], "methods study only"),
                         (["mutation", *SMALL, "--designs", "zz"], "no design 'zz'")):
        assert systolic_study([*argv, "-o", str(tmp_path / "out"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert phrase in err and err.count("\n") == 1, err


def test_help_says_how_long_a_run_takes():
    parser = argparse.ArgumentParser(prog="systolic study")
    study.add_arguments(parser)
    text = parser.format_help()
    for name in ("methods", "mutation", "latency-model", "traffic-pruning", "mp-vs-hybrid"):
        assert name in text
    assert "min" in text and "1024" in text


def test_estimates_follow_the_options():
    from engine.studies import STUDIES

    mutation = STUDIES["mutation"]
    assert mutation.estimate() == "27 designs x 3 runs x 2 s x 1 seed(s): about 2.8 min"
    assert mutation.estimate(seconds=30) == "27 designs x 3 runs x 30 s x 1 seed(s): about 40.6 min"
    assert mutation.estimate(designs=2, seconds=15, seeds=2) == "2 designs x 3 runs x 15 s x 2 seed(s): about 3.0 min"
    assert "depends on the machine" in mutation.estimate(samples=600)
    accuracy = STUDIES["model-accuracy"]
    assert accuracy.estimate() == "48 designs x 5 simulated configurations x 1 seed(s): about 6.0 min"
    assert accuracy.estimate(designs=2, samples=1) == "2 designs x 1 simulated configurations x 1 seed(s): about 3 s"
    assert STUDIES["networks"].estimate(seconds=0.5).startswith("29 layers x 14 designs x 0.5 s on 2 workers: about")
