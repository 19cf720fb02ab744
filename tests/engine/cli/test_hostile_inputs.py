"""Hostile input to every subcommand of this area (issue 31): each case is a command line, run in-process
through engine.cli.main.main, that must end with exit status 2 and one line on stderr holding the
expected fragment -- never a traceback, never a hang, never a blow-up of memory. The cases stop
before any long work (the checks run first), so the table runs in seconds.

Inputs a C compiler accepts (a UTF-8 BOM, a few hundred nested parentheses or blocks, a 300-term
sum, never-used exponential #defines) are checked to be accepted, on the front end alone."""
from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.compiler.frontend import parse_kernel
from engine.errors import KernelError
from engine.network.store import NetworkStore
from engine.search.progress import Candidate, DesignResult, ExplorationResult, TracePoint
from engine.search.store import RunStore
from engine.validation import max_workers

from kernel_snippets import FOOTER, HEADER, MM_LOOPS, VALID_MM

CNN = str(Path(__file__).resolve().parents[3] / "resources" / "kernels" / "cnn.c")
LAYER = {"name": "l1", "params": {"i": 3, "o": 4, "r": 4, "c": 4, "p": 3, "q": 3}}
EXPONENTIAL = "#define A0 x\n" + "".join(f"#define A{i} A{i - 1} A{i - 1}\n" for i in range(1, 40))


def write(folder: Path, name: str, content: str | bytes) -> str:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def kernel(d: Path, text: str | bytes = VALID_MM, name: str = "k.c") -> str:
    return write(d, name, text)


def dead_scheduler() -> str:
    """tcp://127.0.0.1:PORT where nothing listens (a port just released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def csim_project(d: Path, design_json: str | bytes) -> str:
    """A folder shaped like an export whose design.json holds `design_json`."""
    (d / "proj" / "src").mkdir(parents=True)
    for name in ("kernel_kernel.cpp", "kernel_kernel.h"):
        write(d / "proj" / "src", name, "")
    write(d / "proj", "design.json", design_json)
    return str(d / "proj")


def network_file(d: Path, data: dict, name: str = "net.json") -> str:
    return write(d, name, json.dumps(data))


# name -> (argv built in a temporary folder, expected fragment of the one error line)
CASES = {
    # -- the C front end ---------------------------------------------------------------------------
    "#if without an expression": (lambda d: ["designs", kernel(d, "#if\n#endif\n" + VALID_MM)],
                                  "k.c:1: preprocessor: #if needs an expression"),
    "a bare #pragma where #pragma endscop was (pcpp failed on it)": (
        lambda d: ["designs", kernel(d, VALID_MM.replace("#pragma endscop", "#pragma "))],
        "#pragma scop without a matching #pragma endscop"),
    "#elif without an expression": (lambda d: ["designs", kernel(d, "#if 0\n#elif\n#endif\n" + VALID_MM)],
                                    "k.c:2: preprocessor: #elif needs an expression"),
    "Latin-1 kernel": (lambda d: ["designs", kernel(d, b"/* \xa9 2024 */\n" + VALID_MM.encode())],
                       "k.c:1:4: the kernel file is not UTF-8 (byte 0xa9)"),
    "Latin-1 header": (lambda d: ["designs", (write(d, "h.h", b"/* \xa9 */\n"),
                                              kernel(d, '#include "h.h"\n' + VALID_MM))[1]],
                       "h.h:1: preprocessor: the included file is not UTF-8 (byte 0xa9)"),
    "#include /dev/urandom": (lambda d: ["designs", kernel(d, '#include "/dev/urandom"\n' + VALID_MM)],
                              "/dev/urandom: preprocessor: the included file is a device"),
    "#include /dev/zero": (lambda d: ["designs", kernel(d, '#include "/dev/zero"\n' + VALID_MM)],
                           "/dev/zero: preprocessor: the included file is a device"),
    "header symlinked to /dev/zero": (lambda d: ["designs", (os.symlink("/dev/zero", d / "z.h"),
                                                             kernel(d, '#include "z.h"\n' + VALID_MM))[1]],
                                      "z.h: preprocessor: the included file is a device"),
    "header over the size cap": (lambda d: ["designs", (write(d, "big.h", "/*" + "x" * (600 * 1024) + "*/\n"),
                                                        kernel(d, '#include "big.h"\n' + VALID_MM))[1]],
                                 "the included file holds 614,405 bytes; the limit is 524,288 bytes"),
    "-D beside an #if 0 include of /dev/zero": (
        lambda d: ["designs", kernel(d, '#if 0\n#include "/dev/zero"\n#endif\n' + VALID_MM), "-D", "Q=1"],
        "-D Q=1: the kernel does not use 'Q'"),
    "#error": (lambda d: ["designs", kernel(d, "#error sizes missing\n" + VALID_MM)],
               "k.c:1: preprocessor: #error sizes missing"),
    "-D N= (empty)": (lambda d: ["designs", kernel(d), "-D", "N="], "bad -D option 'N=': no value after '='"),
    "unknown #pragma systolic": (lambda d: ["designs", kernel(d, VALID_MM.replace("#pragma scop\n", "#pragma scop\n"
                                                                               "#pragma systolic unroll(4)\n"))],
                                 "k.c:5:9: unknown '#pragma systolic unroll(4)'"),
    "malformed reduction pragma": (lambda d: ["designs", kernel(d, VALID_MM.replace(
        "#pragma scop\n", "#pragma scop\n#pragma systolic reduction(k+1)\n"))],
                                   "'#pragma systolic reduction(k+1)': expected loop names"),
    "kernel is a folder": (lambda d: ["designs", str(d)], "the kernel file is a folder"),
    "exponential #define used": (lambda d: ["designs", kernel(d, EXPONENTIAL + "int y = A39;\n" + VALID_MM)],
                                 "k.c:41: preprocessor: expanding macro 'A39' adds more than 200,000 tokens"),
    "exponential function macro": (lambda d: ["designs", kernel(d, "#define F(x) x x\nint y = " + "F(" * 40 + "1"
                                                               + ")" * 40 + ";\n" + VALID_MM)],
                                   "preprocessor: expanding macro 'F' adds more than 200,000 tokens"),
    "2,000 nested parentheses": (lambda d: ["designs", kernel(d, HEADER + MM_LOOPS + "        C[i][j] += "
                                                             + "(" * 2000 + "A[i][k]" + ")" * 2000 + ";\n" + FOOTER)],
                                 "nests parentheses, brackets or blocks 2002 deep for the C parser"),
    "--simd-info nested 100,000 deep": (lambda d: ["designs", kernel(d), "--simd-info",
                                                   write(d, "s.json", "[" * 100000 + "]" * 100000)],
                                        "s.json: the reduction file nests 100000 levels deep; the limit is 64"),
    "--simd-info not UTF-8": (lambda d: ["designs", kernel(d), "--simd-info", write(d, "s.json", b'{"\xff": 1}')],
                              "s.json:1:3: the reduction file is not UTF-8"),
    # -- files read through engine/validation (size cap, encoding, JSON depth) -----------------------
    "--device nested 100,000 deep": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--param", "i_t1=2",
                                                "--device", write(d, "dev.json", "[" * 100000 + "]" * 100000)],
                                     "dev.json: the device file nests 100000 levels deep; the limit is 64"),
    "--device not UTF-8": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--param", "i_t1=2",
                                      "--device", write(d, "dev.json", b'{"name": "\xe9"}')],
                           "dev.json:1:11: the device file is not UTF-8 (byte 0xe9)"),
    "--device a FIFO": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--param", "i_t1=2",
                                   "--device", (os.mkfifo(d / "dev.json"), str(d / "dev.json"))[1]],
                        "unknown device"),
    "--params-file /dev/zero": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--params-file", "/dev/zero"],
                                "/dev/zero: the params file is a device; expected a regular text file"),
    "--params-file a FIFO": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--params-file",
                                        (os.mkfifo(d / "p.jsonl"), str(d / "p.jsonl"))[1]],
                             "p.jsonl: the params file is a pipe; expected a regular text file"),
    "--params-file of 100,001 lines": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--params-file",
                                                  write(d, "p.jsonl", "{}\n" * 100_001)],
                                       "p.jsonl: the params file holds 100,001 lines; the limit is 100,000"),
    "--params-file beside --param": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--param", "i_t1=2",
                                                "--params-file", write(d, "p.jsonl", "{}\n")],
                                     "--params-file evaluates the configurations of a file; drop --param"),
    "--params-file with --descriptor": (lambda d: ["model", kernel(d), "--design", "i__i-j.k", "--descriptor",
                                                   "--params-file", write(d, "p.jsonl", "{}\n")],
                                        "drop --descriptor"),
    "csim design.json nested deep": (lambda d: ["csim", csim_project(d, "[" * 5000 + "]" * 5000)],
                                     "design.json: the design file nests 5000 levels deep; the limit is 64"),
    "csim design.json not UTF-8": (lambda d: ["csim", csim_project(d, b'{"descriptor": "\xff"}')],
                                   "design.json:1:17: the design file is not UTF-8 (byte 0xff)"),
    "csim --timed design.json Infinity": (lambda d: ["csim", "--timed", csim_project(d, '{"values": Infinity}')],
                                          "design.json: not valid JSON: Infinity is not a JSON number"),
    # -- checks before work ------------------------------------------------------------------------
    "network --scheduler dead, before compiling": (
        lambda d: ["network", str(d / "missing.c"), str(d / "missing.json"), "--scheduler", dead_scheduler(),
                   "--db", str(d / "r.db")], "did not answer: Connection refused"),
    "pods granularity --scheduler dead": (lambda d: ["pods", "granularity", "--scheduler", dead_scheduler()],
                                          "did not answer: Connection refused"),
    "export -o a non-empty folder, before compiling": (
        lambda d: ["export", str(d / "missing.c"), "--design", "x", "-o", (write(d, "notes.txt", "mine"), str(d))[1]],
        "exists and is not empty; use --force"),
    "mapping --stt nested 100,000 deep": (lambda d: ["mapping", kernel(d), "--stt", "[" * 100000 + "]" * 100000],
                                          "does not parse: expected a JSON list of 3 rows of 3 integers"),
    # -- certify and study: the size and -D checks of search ----------------------------------------
    "certify -D N=10^20": (lambda d: ["certify", kernel(d), "-D", "N=" + "1" + "0" * 20, "--design", "x"],
                           "loop 'i' runs 100,000,000,000,000,000,000 iterations; the limit is 2^31-1"),
    "certify -D N=1e20": (lambda d: ["certify", kernel(d), "-D", "N=1e20", "--design", "x"],
                          "loop upper bound '1e20' must be an integer"),
    "certify -D unused": (lambda d: ["certify", kernel(d), "-D", "Q=4", "--design", "x"],
                          "-D Q=4: the kernel does not use 'Q'"),
    "certify --seconds nan": (lambda d: ["certify", kernel(d), "--design", "x", "--seconds", "nan"],
                              "argument --seconds: the time budget must be positive and finite, not nan"),
    "search --certify nan": (lambda d: ["search", kernel(d), "--certify", "nan"],
                             "argument --certify: the time budget must be positive and finite, not nan"),
    "search --certify -1": (lambda d: ["search", kernel(d), "--certify=-1"],
                            "argument --certify: the time budget must be positive and finite, not -1"),
    "certify --gap -1": (lambda d: ["certify", kernel(d), "--design", "x", "--gap", "-1"],
                         "argument --gap: expected a finite number of 0 or more, not -1"),
    "study -D N=3e9": (lambda d: ["study", "methods", "--kernel", kernel(d), "-D", "N=3000000000",
                                  "-o", str(d / "out"), "--quiet"],
                       "loop 'i' runs 3,000,000,000 iterations; the limit is 2^31-1"),
    "study --best-known nested deep": (lambda d: ["study", "methods", "--best-known",
                                                  write(d, "b.json", "[" * 5000 + "]" * 5000), "-o", str(d / "o")],
                                       "b.json: the best-known file nests 5000 levels deep; the limit is 64"),
    "study --best-known a list": (lambda d: ["study", "methods", "--best-known", write(d, "b.json", "[1]"),
                                             "-o", str(d / "o")], "a best-known file is a JSON object"),
    # -- network ------------------------------------------------------------------------------------
    "network --seed 2^64": (lambda d: ["network", "--list", "--seed", str(2**64)],
                            "argument --seed: the seed must be in 0..2^63-1"),
    "network --seed -1": (lambda d: ["network", "--list", "--seed", "-1"],
                          "argument --seed: the seed must be in 0..2^63-1"),
    "network --workers 0": (lambda d: ["network", "--list", "--workers", "0"], "argument --workers: 0 workers"),
    "network --workers -3": (lambda d: ["network", "--list", "--workers", "-3"], "argument --workers: -3 workers"),
    "network --workers over cores x 4": (lambda d: ["network", "--list", "--workers", str(max_workers() + 1)],
                                         f"expected 1..{max_workers()}"),
    "network --seconds inf": (lambda d: ["network", "--list", "--seconds", "inf"],
                              "argument --seconds: the time budget must be positive and finite, not inf"),
    "network --seconds nan": (lambda d: ["network", "--list", "--seconds", "nan"],
                              "argument --seconds: the time budget must be positive and finite, not nan"),
    "network --seconds -1": (lambda d: ["network", "--list", "--seconds", "-1"],
                             "argument --seconds: the time budget must be positive and finite, not -1"),
    "network --single-seconds inf": (lambda d: ["network", "--list", "--single-seconds", "inf"],
                                     "argument --single-seconds: the time budget must be positive and finite"),
    "network --arrays 1-100000000": (lambda d: ["network", "--list", "--arrays", "1-100000000"],
                                     "argument --arrays: '1-100000000': at most 256 arrays on one device"),
    "network --arrays 1-200": (lambda d: ["network", "--list", "--arrays", "1-200"],
                               "200 counts of arrays; the limit is 32 per run"),
    "network CSV with a 200k-character field": (
        lambda d: ["network", CNN, write(d, "n.csv", "name,i\n" + "x" * 200_000 + ",3\n"), "--db", str(d / "r.db")],
        "n.csv:2: a field of more than 131,072 characters; the limit is 1,024"),
    "network CSV with a 2k-character field": (
        lambda d: ["network", CNN, write(d, "n.csv", "name,i\n" + "x" * 2000 + ",3\n"), "--db", str(d / "r.db")],
        "n.csv:2: a field of 2,000 characters; the limit is 1,024"),
    "network CSV not UTF-8": (lambda d: ["network", CNN, write(d, "n.csv", b"name,i\n\xff\xfe,3\n"),
                                         "--db", str(d / "r.db")],
                              "n.csv:2:1: the workload file is not UTF-8 (byte 0xff)"),
    "network JSON nested 100,000 deep": (
        lambda d: ["network", CNN, write(d, "n.json", '{"workloads": ' + "[" * 100000 + "]" * 100000 + "}"),
                   "--db", str(d / "r.db")],
        "n.json: the workload file nests 100001 levels deep; the limit is 64"),
    "network name with ../": (lambda d: ["network", CNN, network_file(d, {"name": "../../evil", "workloads": [LAYER]}),
                                         "--db", str(d / "r.db")],
                              'net.json:1: network name "../../evil": names are printable, without'),
    "layer name with a slash": (lambda d: ["network", CNN, network_file(d, {"workloads": [{**LAYER, "name": "a/b"}]}),
                                           "--db", str(d / "r.db")],
                                'layer name "a/b": names are printable, without'),
    "layer size 2^31": (lambda d: ["network", CNN, network_file(d, {"workloads": [
        {**LAYER, "params": {**LAYER["params"], "i": 2**31}}]}), "--db", str(d / "r.db")],
                        "layer l1: size i = 2147483648; the limit is 2^31-1"),
    # -- pods ---------------------------------------------------------------------------------------
    "pods scale --tdp nan": (lambda d: ["pods", "scale", "--tdp", "nan"],
                             "argument --tdp: expected a positive, finite number, not nan"),
    "pods scale --tdp inf": (lambda d: ["pods", "scale", "--tdp", "inf"],
                             "argument --tdp: expected a positive, finite number, not inf"),
    "pods schedule --png g.xyz": (lambda d: ["pods", "schedule", "resnet50", "--png", str(d / "g.xyz")],
                                  "--png " + "{d}/g.xyz: '.xyz' is not an image format"),
    "pods schedule --png in a missing folder": (lambda d: ["pods", "schedule", "resnet50", "--png",
                                                           str(d / "no" / "g.png")], "does not exist"),
    "pods granularity --scheduler bogus": (lambda d: ["pods", "granularity", "--scheduler", "bogus"],
                                           "--scheduler: scheduler address 'bogus': expected tcp://HOST:PORT"),
    "pods schedule --batch 10^9": (lambda d: ["pods", "schedule", "resnet50", "--batch", "1000000000",
                                              "--png", str(d / "g.png")],
                                   "resnet50 on 32x32 pods is 117,992,000,000,000 tile operations, about"),
    "pods schedule --batch 10^9 as written": (lambda d: ["pods", "schedule", "resnet50", "--batch", "10^9"],
                                              "argument --batch: expected a positive integer, not '10^9'"),
    "pods --post-processors nan": (lambda d: ["pods", "schedule", "resnet50", "--post-processors", "nan"],
                                   "argument --post-processors: expected a finite number of 0 or more, not nan"),
    "pods --pods 10^7": (lambda d: ["pods", "schedule", "resnet50", "--pods", "10000000"],
                         "argument --pods: pods: 10000000 is outside 1..65,536"),
    "pods --technology nested deep": (lambda d: ["pods", "scale", "--technology",
                                                 write(d, "t.json", "[" * 100000 + "]" * 100000)],
                                      "t.json: the technology file nests 100000 levels deep"),
    "pods --technology binary": (lambda d: ["pods", "scale", "--technology", write(d, "t.json", bytes(range(256)))],
                                 "the technology file is not UTF-8"),
    "pods --technology Infinity": (lambda d: ["pods", "scale", "--technology", write(d, "t.json", '{"clock_hz": Infinity}')],
                                   "not valid JSON: Infinity is not a JSON number"),
}


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = main(argv)  # an exception here (a traceback in the real command) fails the test
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("name", CASES)
def test_hostile_input_is_one_line_and_exit_2(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_DB", str(tmp_path / "default.sqlite"))
    monkeypatch.chdir(tmp_path)
    build, fragment = CASES[name]
    code, _, err = run(build(tmp_path), capsys)
    line = one_error_line(err)
    assert code == 2, err
    assert fragment.format(d=tmp_path) in line, line


@pytest.mark.parametrize("text", [
    b"\xef\xbb\xbf" + VALID_MM.encode(),  # a UTF-8 BOM
    (HEADER + MM_LOOPS + "        C[i][j] += " + "(" * 300 + "A[i][k]" + ")" * 300 + ";\n" + FOOTER).encode(),
    (HEADER + MM_LOOPS + "{" * 300 + "        C[i][j] += A[i][k];\n" + "}" * 300 + FOOTER).encode(),
    (HEADER + MM_LOOPS + "        C[i][j] += " + " + ".join(["A[i][k]"] * 300) + ";\n" + FOOTER).encode(),
    (EXPONENTIAL + VALID_MM).encode(),  # never used: never expanded
], ids=["BOM", "300 parentheses", "300 blocks", "300-term sum", "unused exponential defines"])
def test_what_a_c_compiler_accepts_is_accepted(tmp_path, text):
    path = tmp_path / "k.c"
    path.write_bytes(text)
    parsed = parse_kernel(path)
    assert [s.target.array for s in parsed.statements] == ["C"] and parsed.sizes == {"N": 8}


@pytest.mark.parametrize("folder", ['a"b', "c\\d", "e'f"])
def test_a_folder_name_with_a_quote_or_backslash_is_read_and_named(tmp_path, folder):
    (tmp_path / folder).mkdir()
    path = tmp_path / folder / "k.c"
    path.write_text(VALID_MM)
    assert parse_kernel(path).statements[0].location.file == str(path)
    path.write_text(VALID_MM.replace("C[i][j] += A[i][k] * B[k][j];", "C[i][j] += A[i][k] *;"))
    with pytest.raises(KernelError) as error:
        parse_kernel(path)
    assert str(error.value).startswith(f"{path}:8:")


def test_version(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("systolic ") and out.split()[1][0].isdigit(), out


# -- stored rows are untrusted input ----------------------------------------------------------------
def _saved_runs(path: Path) -> tuple[int, int]:
    best = Candidate({"i_t1": 4}, 1200.0, 64.0, 8.0, 2.5)
    good = ExplorationResult("k", "random", 1, (
        DesignResult("i__i-j.k", "random", 10, 0.5, best, (TracePoint(10, 0.5, 1200.0),), (best,), ()),))
    with RunStore(path) as store:
        ids = [store.save(kernel_path="k.c", kernel_text="", sizes={"N": 8}, device="u250", method="random",
                          seed=1, budget={"samples": 10}, result=good) for _ in range(2)]
    return ids[0], ids[1]


DAMAGES = {  # SQL that damages one run's rows -> what the damaged line says
    "list params": ("UPDATE designs SET best_params = '[1, 2]' WHERE run_id = ?", "best params holds a JSON list"),
    "text latency": ("UPDATE designs SET best_latency = 'fast' WHERE run_id = ?", "best latency is 'fast'"),
    "NULL latency": ("UPDATE designs SET best_latency = NULL WHERE run_id = ?", "best latency is NULL"),
    "blob design name": ("UPDATE designs SET design = x'00ff' WHERE run_id = ?", "designs.design is a blob"),
    "'abc' seed": ("UPDATE runs SET seed = 'abc' WHERE id = ?", "seed is 'abc'"),
    "1e999 elapsed": ("UPDATE designs SET elapsed = 1e999 WHERE run_id = ?", "designs.elapsed is inf"),
    "params of text": ("UPDATE designs SET best_params = '{\"i_t1\": \"4\"}' WHERE run_id = ?",
                       "parameter 'i_t1' = '4' is not an integer"),
    "deep notes": ("UPDATE designs SET notes = '" + "[" * 5000 + "]" * 5000 + "' WHERE run_id = ?",
                   "nests deeper than 64 levels"),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_stored_run_is_damaged_and_the_others_still_read(damage, tmp_path, capsys):
    path = tmp_path / "runs.sqlite"
    bad, good = _saved_runs(path)
    sql, reason = DAMAGES[damage]
    with sqlite3.connect(path) as db:
        db.execute(sql, (bad,))
    code, _, err = run(["runs", "--db", str(path), "--show", str(bad)], capsys)
    assert code == 2 and f"run {bad} in {path} is damaged and cannot be read" in one_error_line(err)
    assert reason in err, err
    code, out, err = run(["runs", "--db", str(path), "--show", str(good)], capsys)
    assert code == 0 and "i__i-j.k" in out and not err
    code, out, _ = run(["runs", "--db", str(path)], capsys)  # the listing shows both (the summary may still read)
    assert code == 0 and re.search(rf"^ *{good} .* finished ", out, re.M) and re.search(rf"^ *{bad} ", out, re.M)


def test_certify_skips_a_damaged_run_and_starts_from_another(tmp_path, capsys):
    from engine.cli.certify import stored_start
    from engine.compiler.design_space import compile_kernel

    k = kernel(tmp_path)
    space = compile_kernel(k)
    design = space.designs[0]
    names = [p.name for p in design.params if p.tunable]
    params = {n: 1 for n in names}
    path = tmp_path / "runs.sqlite"
    best = Candidate(params, 1000.0, 1.0, 1.0, 1.0)
    result = ExplorationResult("k", "random", 1, (DesignResult(design.id, "random", 1, 0.1, best, (), (), ()),))
    with RunStore(path) as store:
        good = store.save(kernel_path=k, kernel_text=space.kernel.source, sizes=space.kernel.sizes, device="u250",
                          method="random", seed=1, budget={"samples": 1}, result=result)
        bad = store.save(kernel_path=k, kernel_text=space.kernel.source, sizes=space.kernel.sizes, device="u250",
                         method="random", seed=1, budget={"samples": 1}, result=result)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE designs SET best_latency = 'abc' WHERE run_id = ?", (bad,))
    found = stored_start(space, design.id, "u250", path)
    assert found == (params, f"stored run {good}", good)
    assert f"note: run {bad} is damaged, skipped: StoredRowError: best latency is 'abc'" in capsys.readouterr().err


# -- network runs: damaged rows, and running / interrupted / killed ---------------------------------
def _network_run(store: NetworkStore) -> int:
    return store.create(kernel_path="k.c", kernel_text="int x;", defines=[], network="n",
                        workload=[{"name": "l1", "tags": [], "sizes": {"I": 4}}], device="u250", method="random",
                        seconds=0.5, samples=None, seed=0, options={"designs": []})


def test_network_list_tells_running_interrupted_killed_and_damaged(tmp_path, capsys):
    path = tmp_path / "runs.sqlite"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid now names no process
    with NetworkStore(path) as store:
        running, interrupted, killed, damaged = (_network_run(store) for _ in range(4))
        store.set_status(interrupted, "interrupted")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE network_runs SET pid = ? WHERE id = ?", (gone.pid, killed))
        db.execute("UPDATE network_runs SET pid = ? WHERE id = ?", (os.getppid(), running))  # alive, not us
        db.execute("UPDATE network_runs SET workload = x'00' WHERE id = ?", (damaged,))
    code, out, err = run(["network", "--list", "--db", str(path)], capsys)
    assert code == 0 and not err
    status = {int(line.split()[0]): line.split()[-2] for line in out.splitlines()[1:] if line.split()[0].isdigit()}
    assert status == {running: "running", interrupted: "interrupted", killed: "killed", damaged: "damaged"}, out
    assert f"network run {damaged} is damaged and cannot be read: workload is a blob of 1 bytes" in out
    code, _, err = run(["network", "--resume", str(damaged), "--db", str(path)], capsys)
    assert code == 2 and f"network run {damaged} in {path} is damaged" in one_error_line(err)
    code, _, err = run(["network", "--resume", str(running), "--db", str(path)], capsys)
    assert code == 2 and f"network run {running} is running (process {os.getppid()})" in one_error_line(err)


def test_a_damaged_pair_is_left_out_and_deleted_on_resume(tmp_path):
    from engine.network.task import PairResult

    path = tmp_path / "runs.sqlite"
    with NetworkStore(path) as store:
        run_id = _network_run(store)
        store.add_pairs(run_id, [PairResult("l1", d, Candidate({"i_t1": 2}, 10.0, 1.0, 1.0, 1.0), 5, 0.1)
                                 for d in ("a", "b")])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE network_pairs SET latency = 'slow' WHERE design = 'b'")
    with NetworkStore(path) as store:
        assert [p.design for p in store.pairs(run_id)] == ["a"]
        assert store.claim(run_id) == 1
        store.add_pair(run_id, PairResult("l1", "b", None, 0, 0.1, (), "recomputed"))
        assert sorted(p.design for p in store.pairs(run_id)) == ["a", "b"]


@pytest.mark.parametrize("stored_path", ["/dev/zero", "{d}/fifo.c", "{d}/latin1.c"])
def test_export_run_reads_a_stored_kernel_path_through_the_file_checks(stored_path, tmp_path, capsys):
    """A stored row's kernel path is untrusted: a device, a FIFO or a non-UTF-8 file there is not
    read (no hang, no blow-up); the stored kernel text is exported instead."""
    os.mkfifo(tmp_path / "fifo.c")
    (tmp_path / "latin1.c").write_bytes(b"/* \xa9 */\n")
    best = Candidate({"i_t1": 2, "j_t1": 2, "k_t1": 2, "i_t2": 1, "j_t2": 1, "k_t2": 1}, 100.0, 1.0, 1.0, 1.0)
    result = ExplorationResult("k", "random", 1, (DesignResult("i__i-j.k", "random", 1, 0.1, best, (), (), ()),))
    db = tmp_path / "runs.sqlite"
    with RunStore(db) as store:
        run_id = store.save(kernel_path=stored_path.format(d=tmp_path), kernel_text=VALID_MM, sizes={}, device="u250",
                            method="random", seed=1, budget={"samples": 1}, result=result)
    code, out, err = run(["export", "--run", str(run_id), "--db", str(db), "-o", str(tmp_path / "proj")], capsys)
    assert code == 0, err
    assert " design i__i-j.k (run " in out and (tmp_path / "proj" / "design.json").is_file()


def test_export_simulate_checks_the_output_folder_before_simulating(tmp_path, capsys, monkeypatch):
    import engine.cli.export as export_cli

    def simulated(*_args, **_kwargs):
        raise AssertionError("simulated before the folder check")

    monkeypatch.setattr(export_cli, "simulate", simulated)
    monkeypatch.chdir(tmp_path)
    k = kernel(tmp_path)
    (tmp_path / "k-i__i-j.k").mkdir()
    (tmp_path / "k-i__i-j.k" / "notes.txt").write_text("mine")  # the default folder, not empty
    code, _, err = run(["export", k, "--design", "i__i-j.k", "--param", "i_t1=2", "--param", "j_t1=2",
                        "--param", "k_t1=2", "--param", "i_t2=1", "--param", "j_t2=1", "--param", "k_t2=1",
                        "--simulate"], capsys)
    assert code == 2 and "k-i__i-j.k exists and is not empty; use --force" in one_error_line(err)
