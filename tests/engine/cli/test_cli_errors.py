"""`systolic designs` on bad input: one line on stderr ("error: file:line:col: reason"), exit status 2,
nothing on stdout and never a traceback, both through main() and as a real process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.main import main

from kernel_snippets import FOOTER, HEADER, MM_LOOPS, VALID_MM

# name -> (kernel text, the line the error must name, a phrase of the reason)
BAD_KERNELS = {
    "syntax": (HEADER + "  for (int i = 0; i < N i++)\n    C[i][0] = 1;\n" + FOOTER, 5, "syntax error"),
    "non-affine-subscript": (HEADER + MM_LOOPS + "        C[i][j] += A[i*k][k] * B[k][j];\n" + FOOTER,
                             8, "not affine"),
    "non-affine-bound": (HEADER + "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < i*i; j++)\n"
                         "      C[i][j] = 1;\n" + FOOTER, 6, "not affine"),
    "call": (HEADER + MM_LOOPS + "        C[i][j] += exp(A[i][k]);\n" + FOOTER, 8, "call to 'exp'"),
    "pointer": ("#define N 8\nfloat *A;\nfloat C[N][N];\nvoid kernel(void) {\n#pragma scop\n"
                "  for (int i = 0; i < N; i++)\n    C[i][0] = A[i];\n" + FOOTER, 7, "pointer"),
    "while": (HEADER + "  for (int i = 0; i < N; i++)\n    while (C[i][0] < 1)\n      C[i][0] += 1;\n" + FOOTER,
              6, "while loops"),
    "missing-macro": ("float C[8][8];\nvoid kernel(void) {\n#pragma scop\n  for (int i = 0; i < N; i++)\n"
                      "    C[i][0] = 1;\n" + FOOTER, 4, "-D N"),
    "empty-scop": (HEADER + FOOTER, 4, "empty"),
    "out-of-bounds": (HEADER + MM_LOOPS + "        C[i][j] += A[i+1][k] * B[k][j];\n" + FOOTER, 8, "outside"),
    "step": (HEADER + "  for (int i = 0; i < N; i += 2)\n    C[i][0] = 1;\n" + FOOTER, 5, "unit stride"),
    "element-type": ("#define N 8\nlong double A[N][N];\nvoid kernel(void) {\n#pragma scop\n"
                     "  for (int i = 0; i < N; i++)\n    A[i][0] = 1;\n" + FOOTER, 2, "long double"),
    "missing-include": ('#include "x.h"\n' + VALID_MM, 1, "x.h"),
    "scalar-carried": (HEADER + "  for (int i = 0; i < N; i++) {\n    float s = 0;\n"
                       "    for (int k = 0; k < N; k++)\n      s = s + A[i][k];\n  }\n" + FOOTER, 8, "scalar 's'"),
    "non-uniform": ("#define N 8\nfloat A[N][N];\nvoid kernel(void) {\n#pragma scop\n"
                    "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n"
                    "      A[i][j] = A[j][i] + 1;\n" + FOOTER, 7, "flow dependence S0["),
}


def kernel_file(tmp_path: Path, text: str, name: str = "kernel.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def run_designs(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["designs", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), err
    return lines[0]


# -- in-process: main() -------------------------------------------------------------------------

@pytest.mark.parametrize("case", list(BAD_KERNELS))
def test_bad_kernel_is_one_error_line_and_exit_2(tmp_path, capsys, case):
    text, line, phrase = BAD_KERNELS[case]
    path = kernel_file(tmp_path, text)
    code, out, err = run_designs(capsys, str(path))
    assert code == 2
    assert out == ""
    message = assert_one_error_line(err)
    assert message.startswith(f"error: {path}:{line}:") or message.startswith(f"error: {path}:{line} "), message
    assert phrase in message


def test_missing_file(tmp_path, capsys):
    path = tmp_path / "nope.c"
    code, out, err = run_designs(capsys, str(path))
    assert (code, out) == (2, "")
    message = assert_one_error_line(err)
    assert message.startswith(f"error: {path}: ") and "no such kernel file" in message


def test_no_scop_region(tmp_path, capsys):
    path = kernel_file(tmp_path, "#define N 8\nfloat A[N];\nvoid kernel(void) {\n"
                                 "  for (int i = 0; i < N; i++)\n    A[i] = 1;\n}\n")
    code, out, err = run_designs(capsys, str(path))
    assert (code, out) == (2, "")
    message = assert_one_error_line(err)
    assert message.startswith(f"error: {path}: ") and "#pragma scop" in message


@pytest.mark.parametrize("option", ["1N=4", "=4", "N-1=4"])
def test_minus_d_with_a_bad_name(tmp_path, capsys, option):
    path = kernel_file(tmp_path, VALID_MM)
    code, out, err = run_designs(capsys, str(path), "-D", option)
    assert (code, out) == (2, "")
    message = assert_one_error_line(err)
    assert option in message and "-D" in message


def test_minus_d_overrides_the_define(tmp_path, capsys):
    code, out, err = run_designs(capsys, str(kernel_file(tmp_path, VALID_MM)), "-D", "N=4")
    assert (code, err) == (0, "")
    assert "i=4 j=4 k=4" in out


def test_minus_d_supplies_a_missing_macro(tmp_path, capsys):
    text, _, _ = BAD_KERNELS["missing-macro"]
    code, out, err = run_designs(capsys, str(kernel_file(tmp_path, text)), "-D", "N=8")
    assert (code, err) == (0, "")
    assert "designs" in out


# -- as a process: what a user at a terminal sees -----------------------------------------------

def run_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine.cli.main", "designs", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.mark.parametrize("case", ["syntax", "call", "missing-include", "non-uniform"])
def test_process_prints_one_line_and_exits_2(tmp_path, case):
    text, line, phrase = BAD_KERNELS[case]
    path = kernel_file(tmp_path, text)
    result = run_process(str(path), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "kernel.c" in lines[0] and f":{line}" in lines[0]
    assert lines[0].startswith(f"error: {path}:{line}")
    assert phrase in lines[0]


def test_process_missing_file(tmp_path):
    result = run_process(str(tmp_path / "nope.c"), cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [f"error: {tmp_path / 'nope.c'}: no such kernel file "
                                          f"(expected a C file with a #pragma scop region)"]


def test_process_bad_minus_d(tmp_path):
    result = run_process(str(kernel_file(tmp_path, VALID_MM)), "-D", "1N=4", cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("error: ")
    assert "1N=4" in result.stderr


def test_process_names_a_relative_path_as_given(tmp_path):
    text, line, _ = BAD_KERNELS["syntax"]
    kernel_file(tmp_path, text)
    result = run_process("kernel.c", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: kernel.c:{line}:"), result.stderr


def test_every_error_is_one_non_empty_line(monkeypatch, capsys):
    from engine.cli import main as cli
    from engine.errors import EngineError
    from engine.cli.main import one_line
    assert one_line(EngineError("preprocessor: Unterminated #ifndef L\n\n")) == "preprocessor: Unterminated #ifndef L"
    assert one_line(EngineError("first\nsecond")) == "first; second"
    assert one_line(EngineError("compile error: ")) == "compile error: EngineError (no reason given)"
    for exc, line in ((OSError(28, "No space left on device", "/data/runs.sqlite"),
                       "error: /data/runs.sqlite: No space left on device"),
                      (MemoryError(), "error: out of memory (try smaller sizes or a smaller configuration)"),
                      (EngineError(""), "error: EngineError (no reason given)")):
        def fail(_args, exc=exc):
            raise exc
        monkeypatch.setattr(cli.SUBCOMMANDS["runs"], "run", fail)
        assert cli.main(["runs"]) == 2
        assert capsys.readouterr().err == line + "\n"


def test_argument_errors_are_one_line(capsys):
    from engine.cli.main import main
    assert main(["search"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("systolic search: error: ")
