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
    assert "about" in captured.err and "i-j__i-j.k" in captured.err  # estimate and progress on stderr
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
