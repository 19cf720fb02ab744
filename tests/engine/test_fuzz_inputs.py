"""Fuzz the inputs beside the kernel (issue 31): mutated headers through `systolic designs`, mutated JSON
files through the readers of workloads, technologies, reduction files, device files and an export's
design.json (csim), and mutated stored rows
through the run databases. Each input is accepted or refused with an EngineError (one line, exit 2
in the CLI); nothing else may escape, and listing a database never fails on a damaged row.

The default suite runs a small sample; issue 31's counts (1,000 headers, 300 JSON files, 200 stored
rows) are behind @pytest.mark.slow. Rerun a failure with FUZZ_SEED=<seed> (printed)."""
from __future__ import annotations

import random
import sqlite3

import pytest

from engine.compiler.frontend import parse_kernel
from engine.csim.project import read_project
from engine.models.device import load_device
from engine.errors import EngineError
from engine.network.store import NetworkStore
from engine.network.task import PairResult
from engine.network.workload import load_network
from engine.pods.technology import DEFAULT_TECHNOLOGY, load_technology
from engine.resources import RESOURCES
from engine.search.progress import Candidate, DesignResult, ExplorationResult, TracePoint
from engine.search.store import RunStore

from test_fuzz import base_seed, mutate, run_cli  # the kernel fuzzer's token mutations and in-process runner

from kernel_snippets import VALID_MM

HEADER = "#ifndef SIZES_H\n#define SIZES_H\n#define N 8\ntypedef float data_t;\n#define SCALE (N * 2)\n#endif\n"
KERNEL = '#include "sizes.h"\n' + VALID_MM.replace("#define N 8\n", "")


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """Token mutations of the text, then maybe a byte-level change: a BOM, a Latin-1 byte, a NUL, a cut."""
    data = mutate(data.decode(), rng).encode()
    kind = rng.randrange(6)
    if kind == 0:
        return b"\xef\xbb\xbf" + data
    if kind == 1 and data:
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.choice((0xa9, 0xff, 0x80, 0x00))]) + data[i:]
    if kind == 2:
        return data + b"#define D" + b" D" * rng.randint(1, 5) + b"\n"
    return data


def check(call, where: str, broken: list[str]) -> None:
    try:
        call()
    except EngineError as exc:
        if "\n" in str(exc) or not str(exc).strip():
            broken.append(f"not one line: {where}: {str(exc)[:200]!r}")
    except BaseException as exc:  # noqa: BLE001 (what the test is looking for)
        broken.append(f"{type(exc).__name__}: {str(exc)[:200]}: {where}")


# -- headers ---------------------------------------------------------------------------------------
def fuzz_headers(count: int, tmp_path) -> None:
    seed = base_seed()
    (tmp_path / "k.c").write_text(KERNEL)
    broken, outcomes = [], {0: 0, 2: 0}
    for n in range(count):
        rng = random.Random(seed + n)
        (tmp_path / "sizes.h").write_bytes(mutate_bytes(HEADER.encode(), rng))
        where = f"FUZZ_SEED={seed} header {n} (seed {seed + n})"
        try:
            code, _, err, _ = run_cli(["designs", str(tmp_path / "k.c")])
        except BaseException as exc:  # noqa: BLE001
            broken.append(f"{type(exc).__name__}: {str(exc)[:200]}: {where}")
            continue
        if code not in (0, 2) or (code == 2 and (err.count("\n") != 1 or not err.startswith("error: "))):
            broken.append(f"exit {code}: {where}: {err[:300]!r}")
            continue
        outcomes[code] += 1
    print(f"{count} mutated headers: {outcomes[0]} compiled, {outcomes[2]} refused in one line, {len(broken)} broken")
    assert not broken, "\n".join(broken[:20])


def test_mutated_headers_sample(tmp_path):
    fuzz_headers(15, tmp_path)


@pytest.mark.slow
def test_mutated_headers_1000(tmp_path):
    fuzz_headers(1000, tmp_path)


# -- JSON inputs -----------------------------------------------------------------------------------
def mutate_json(text: str, rng: random.Random) -> bytes:
    kind = rng.randrange(5)
    if kind == 0:  # nesting
        depth = rng.choice((10, 63, 65, 1000, 100000))
        return ("[" * depth + "]" * depth).encode()
    if kind == 1:  # a value replaced by a hostile one
        value = rng.choice(("1e999", "-1", "0", "NaN", "Infinity", '"x"', "null", "[]", "{}", "true",
                            "9" * 5000, '"../../x"', '"\\u0000"'))
        numbers = [m for m in range(len(text)) if text[m].isdigit() and (m == 0 or not text[m - 1].isdigit())]
        if numbers:
            at = rng.choice(numbers)
            end = at
            while end < len(text) and (text[end].isdigit() or text[end] == "."):
                end += 1
            return (text[:at] + value + text[end:]).encode()
    return mutate_bytes(text.encode(), rng)


DESIGN_JSON = ('{"descriptor": {"version": "1.5", "design": {"id": "i__i-j.k"}}, "values": {"i_t1": 4, "j_t1": 8},'
               ' "dram": {"A": {"words": 64, "layout": "serialized", "access": "A[i]"}}, "report": {"latency_cycles": 12}}')


def fuzz_json(count: int, tmp_path) -> None:
    seed = base_seed()
    sources = {
        "workload": ((RESOURCES / "networks" / "vgg16.json").read_text(), "w.json", load_network),
        "technology": (DEFAULT_TECHNOLOGY.read_text(), "t.json", load_technology),
        "reduction": ('{"kernel": {"reduction": ["k"]}}', "r.json",
                      lambda path: parse_kernel(tmp_path / "k.c", simd_info=path)),
        "device": ((RESOURCES / "devices" / "u250.json").read_text(), "device.json", lambda path: load_device(str(path))),
        "design": (DESIGN_JSON, "proj/design.json", lambda path: read_project(path.parent)),
    }
    (tmp_path / "k.c").write_text(VALID_MM)
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "kernel_kernel.cpp").write_text(
        "#pragma HLS INTERFACE m_axi port=A offset=slave bundle=gmem_A depth=64\nA[i];\n")
    (tmp_path / "proj" / "src" / "kernel_kernel.h").write_text("#define A_DRAM_WORDS 64L\n")
    broken: list[str] = []
    for n in range(count):
        rng = random.Random(seed + n)
        kind = rng.choice(sorted(sources))
        text, name, read = sources[kind]
        path = tmp_path / name
        path.write_bytes(mutate_json(text, rng))
        check(lambda: read(path), f"FUZZ_SEED={seed} {kind} file {n} (seed {seed + n})", broken)
    print(f"{count} mutated JSON files: {len(broken)} broken")
    assert not broken, "\n".join(broken[:20])


def test_mutated_json_sample(tmp_path):
    fuzz_json(30, tmp_path)


@pytest.mark.slow
def test_mutated_json_300(tmp_path):
    fuzz_json(300, tmp_path)


# -- stored rows -----------------------------------------------------------------------------------
HOSTILE_VALUES = (None, "abc", "", b"\x00\xff", 1e308 * 10, -1, 2**63 - 1, "[1, 2]", "{}", '{"i_t1": "4"}',
                  '{"i_t1": 1e999}', "[" * 5000 + "]" * 5000, "null", 3.5, '"running"')
RUN_COLUMNS = ("created", "kernel_path", "kernel_text", "sizes", "device", "method", "seed", "budget", "options",
               "status", "kernel", "result_method", "result_seed", "pid", "host", "updated")
DESIGN_COLUMNS = ("design", "method", "samples", "elapsed", "stopped", "notes", "pareto", "best_params",
                  "best_latency", "best_dsp", "best_bram18k", "best_throughput")
NETWORK_COLUMNS = ("created", "kernel_path", "defines", "network", "workload", "device", "method", "seconds",
                   "samples", "seed", "options", "status", "pid", "host", "updated")
PAIR_COLUMNS = ("params", "latency", "dsp", "bram18k", "gops", "samples", "seconds", "notes", "error")


def _stores(path) -> tuple[int, int]:
    best = Candidate({"i_t1": 4}, 1200.0, 64.0, 8.0, 2.5)
    result = ExplorationResult("k", "random", 1, (
        DesignResult("d", "random", 10, 0.5, best, (TracePoint(10, 0.5, 1200.0),), (best,), ("n",)),))
    with RunStore(path) as store:
        run_id = store.save(kernel_path="k.c", kernel_text="", sizes={"N": 8}, device="u250", method="random",
                            seed=1, budget={"samples": 10}, result=result)
    with NetworkStore(path) as store:
        network_id = store.create(kernel_path="k.c", kernel_text="", defines=[], network="n",
                                  workload=[{"name": "l1", "tags": [], "sizes": {"I": 4}}], device="u250",
                                  method="random", seconds=0.5, samples=None, seed=0, options={})
        store.add_pair(network_id, PairResult("l1", "d", best, 5, 0.1, ("n",)))
    return run_id, network_id


def fuzz_rows(count: int, tmp_path) -> None:
    seed = base_seed()
    broken: list[str] = []
    for n in range(count):
        rng = random.Random(seed + n)
        path = tmp_path / f"runs{n}.sqlite"
        run_id, network_id = _stores(path)
        changes = []
        with sqlite3.connect(path) as db:
            for _ in range(rng.randint(1, 3)):
                table, key, columns, row = rng.choice((("runs", "id", RUN_COLUMNS, run_id),
                                                       ("designs", "run_id", DESIGN_COLUMNS, run_id),
                                                       ("network_runs", "id", NETWORK_COLUMNS, network_id),
                                                       ("network_pairs", "run_id", PAIR_COLUMNS, network_id)))
                column, value = rng.choice(columns), rng.choice(HOSTILE_VALUES)
                changes.append(f"{table}.{column}={str(value)[:20]!r}")
                try:
                    db.execute(f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (value, row))
                except sqlite3.IntegrityError:  # NOT NULL: the schema protects this column
                    changes.pop()
        where = f"FUZZ_SEED={seed} database {n} (seed {seed + n}): {', '.join(changes)}"
        with RunStore(path) as store:
            check(store.list_runs, where + " [list_runs]", broken)
            check(lambda: store.load(run_id), where + " [load]", broken)
            check(lambda: store.top_k(run_id, 3), where + " [top_k]", broken)
        with NetworkStore(path) as store:
            check(store.runs, where + " [network runs]", broken)
            check(lambda: store.load(network_id), where + " [network load]", broken)
            check(lambda: store.pairs(network_id), where + " [pairs]", broken)
        for argv in (["runs", "--db", str(path)], ["runs", "--db", str(path), "--show", str(run_id)],
                     ["network", "--list", "--db", str(path)]):
            try:
                code, out, err, _ = run_cli(argv)
            except BaseException as exc:  # noqa: BLE001
                broken.append(f"{type(exc).__name__}: {str(exc)[:200]}: {where} {argv[:3]}")
                continue
            if code not in (0, 2) or (code == 2 and err.count("\n") != 1):
                broken.append(f"exit {code}: {where} {argv[:3]}: {err[:200]!r}")
    print(f"{count} damaged databases: {len(broken)} broken")
    assert not broken, "\n".join(broken[:20])


def test_damaged_rows_sample(tmp_path):
    fuzz_rows(15, tmp_path)


@pytest.mark.slow
def test_damaged_rows_200(tmp_path):
    fuzz_rows(200, tmp_path)

