"""Fuzz: kernels mutated from the bundled ones through `systolic designs`, and random parameter files
through `systolic model --params-file`. Every input either works or gives a one-line error with exit
status 2: never a traceback (an exception escaping main), never a hang.

The default suite runs a small sample; the full counts of issue 19 (1,000 kernels, 500 files) are
behind @pytest.mark.slow. The base seed is printed (and in every failure message): rerun a failure
with FUZZ_SEED=<seed>. Each case's time is measured and the slowest are printed; a case running past
HANG_SECONDS is reported as a hang (a generous bound: speed is not what this test measures).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import signal
import time

import pytest

from engine.cli.main import main
from engine.resources import KERNELS

KERNEL_NAMES = ("mm", "cnn", "mttkrp", "ttm", "ttmc")
TOKEN = re.compile(r"[A-Za-z_]\w*|\d+|\s+|.", re.S)
HANG_SECONDS = 60


class Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise Hang


def base_seed() -> int:
    seed = int(os.environ.get("FUZZ_SEED", random.randrange(10**9)))
    print(f"FUZZ_SEED={seed}")
    return seed


def run_cli(argv: list[str]) -> tuple[int, str, str, float]:
    """main(argv) in this process with stdout/stderr captured; an escaping exception fails the test."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    start = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - start


# -- kernels -----------------------------------------------------------------------------------------
def mutate(text: str, rng: random.Random) -> str:
    """1-4 of: delete, swap, duplicate a token; a random identifier or number; truncate the file.
    Three tokens in four are picked in the scop region (what the compiler reads past the parser)."""
    tokens = TOKEN.findall(text)

    def solid() -> int:
        joined = "".join(tokens)
        start, end = joined.find("#pragma scop"), joined.find("#pragma endscop")
        at, lo, hi = 0, None, None
        for i, t in enumerate(tokens):  # the token range of the scop region, if still there
            if lo is None and start >= 0 and at >= start + len("#pragma scop"):
                lo = i
            if hi is None and end >= 0 and at >= end:
                hi = i
            at += len(t)
        scop = range(lo, hi) if lo is not None and hi is not None and lo < hi and rng.random() < 0.75 else None
        return rng.choice([i for i in (scop or range(len(tokens))) if not tokens[i].isspace()] or [0])

    for _ in range(rng.randint(1, 4)):
        if len(tokens) < 2:
            break
        kind = rng.choice(("delete", "swap", "duplicate", "identifier", "number", "delete", "swap", "duplicate",
                           "identifier", "number", "truncate"))
        i = solid()
        if kind == "delete":
            del tokens[i]
        elif kind == "swap":
            j = solid()
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif kind == "duplicate":
            tokens.insert(i, tokens[i])
        elif kind == "identifier":
            name = rng.choice(("i", "j", "k", "A", "B", "C", "tmp", "x" * rng.randint(1, 40),
                               rng.choice("abcdefghijklmnopqrstuvwxyz_") + str(rng.randrange(10**6))))
            if rng.random() < 0.5:
                tokens[i] = name
            else:
                tokens.insert(i, " " + name + " ")
        elif kind == "number":
            number = rng.choice((0, 1, -1, 2, 3, 7, 64, 1023, 2**31, 2**63, 10**23, rng.randrange(10**6)))
            tokens[i] = str(number)
        else:
            tokens = tokens[:rng.randrange(len(tokens))]
    return "".join(tokens)


def check_kernel(path, where: str) -> tuple[int, float]:
    """(exit status, seconds) of `systolic designs` on one kernel; a broken promise raises Broken."""
    try:
        code, out, err, seconds = run_cli(["designs", str(path)])
    except Hang:
        raise Broken(f"hang (> {HANG_SECONDS} s): {where}") from None
    except BaseException as exc:  # an exception escaping main is a traceback for the user
        raise Broken(f"traceback {type(exc).__name__}: {str(exc)[:200]}: {where}") from None
    if code not in (0, 2):
        raise Broken(f"exit {code}: {where}: {err[-300:]}")
    if code == 2:
        reason = err[len("error: "):].strip()
        if err.count("\n") != 1 or not err.startswith("error: ") or not reason or reason.endswith(":"):
            raise Broken(f"not one line with a reason: {where}: {err[:300]!r}")
    return code, seconds


class Broken(Exception):
    pass


def fuzz_kernels(count: int, tmp_path) -> None:
    seed = base_seed()
    sources = {name: (KERNELS / f"{name}.c").read_text() for name in KERNEL_NAMES}
    times, outcomes, broken = [], {0: 0, 2: 0}, []
    for n in range(count):
        rng = random.Random(seed + n)
        name = rng.choice(KERNEL_NAMES)
        path = tmp_path / f"{name}.c"
        path.write_text(mutate(sources[name], rng))
        try:
            code, seconds = check_kernel(path, f"FUZZ_SEED={seed} kernel {n} (seed {seed + n}, from {name}.c)")
        except Broken as exc:
            broken.append(str(exc))
            continue
        times.append((seconds, n))
        outcomes[code] += 1
    times.sort(reverse=True)
    print(f"{count} mutated kernels: {outcomes[0]} compiled, {outcomes[2]} refused in one line, {len(broken)} "
          f"broken; slowest " + ", ".join(f"{s:.2f} s (kernel {n})" for s, n in times[:3]))
    assert not broken, f"{len(broken)} of {count} kernels broke a promise:\n" + "\n".join(broken[:20])


def test_mutated_kernels_sample(tmp_path):
    fuzz_kernels(25, tmp_path)


@pytest.mark.slow
def test_mutated_kernels_1000(tmp_path):
    fuzz_kernels(1000, tmp_path)


# -- parameter files ---------------------------------------------------------------------------------
PARAMS = ("i_t1", "j_t1", "k_t1", "i_t2", "j_t2", "k_t2")


def random_line(rng: random.Random) -> bytes:
    value = lambda: rng.choice((rng.randint(1, 64), rng.randint(-5, 5), 2**63, 10**30, 1.5, 8.0, "8", None, True,
                                [], {}, float("nan")))
    kind = rng.randrange(8)
    if kind <= 2:  # an object, mostly of the right parameters
        names = rng.sample(PARAMS, rng.randint(0, 6)) + (["zz"] if rng.random() < 0.2 else [])
        obj = {n: (rng.choice((1, 2, 4, 8, 16, 32, 64)) if rng.random() < 0.8 else value()) for n in names}
        return json.dumps(obj).encode()
    if kind == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
    if kind == 4:
        return json.dumps({n: 8 for n in PARAMS}).encode()[:rng.randint(0, 60)]
    if kind == 5:
        return json.dumps(rng.choice(([1, 2], "text", 3, None, [{"i_t1": 8}]))).encode()
    if kind == 6:
        return b"  " if rng.random() < 0.5 else b"\xef\xbb\xbf" + json.dumps({"i_t1": 8}).encode()
    return ("[" * rng.randint(1, 3000)).encode()


def check_params_file(kernel: str, path, where: str) -> float:
    try:
        code, out, err, seconds = run_cli(["model", kernel, "--preset", "small", "--design", "i-j__i-j.k",
                                           "--params-file", str(path)])
    except Hang:
        raise Broken(f"hang (> {HANG_SECONDS} s): {where}") from None
    except BaseException as exc:
        raise Broken(f"traceback {type(exc).__name__}: {str(exc)[:200]}: {where}") from None
    if code != 0 or err:
        raise Broken(f"exit {code}: {where}: {err[-300:]}")
    results = [json.loads(line) for line in out.splitlines()]
    expected = [i for i, raw in enumerate(path.read_bytes().split(b"\n"), 1) if raw.strip()]
    if len(results) != len(expected):
        raise Broken(f"{len(results)} results for {len(expected)} non-blank lines: {where}")
    for r, line in zip(results, expected):
        if r.get("line") not in (None, line) or not ("error" in r or "latency_cycles" in r):
            raise Broken(f"line {line}: {r}: {where}")
        if "error" in r and (not r["error"] or "\n" in r["error"]):
            raise Broken(f"line {line}: error not one line: {r['error']!r}: {where}")
    return seconds


def fuzz_params_files(count: int, tmp_path) -> None:
    seed = base_seed()
    kernel = str(KERNELS / "mm.c")
    times, broken = [], []
    for n in range(count):
        rng = random.Random(seed + n)
        lines = [random_line(rng) for _ in range(rng.randint(1, 12))]
        path = tmp_path / "params.jsonl"
        path.write_bytes(b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b""))
        try:
            times.append(check_params_file(kernel, path, f"FUZZ_SEED={seed} file {n} (seed {seed + n})"))
        except Broken as exc:
            broken.append(str(exc))
    print(f"{count} parameter files: {len(broken)} broken; slowest {max(times, default=0):.2f} s")
    assert not broken, f"{len(broken)} of {count} files broke a promise:\n" + "\n".join(broken[:20])


def test_random_params_files_sample(tmp_path):
    fuzz_params_files(5, tmp_path)


@pytest.mark.slow
def test_random_params_files_500(tmp_path):
    fuzz_params_files(500, tmp_path)
