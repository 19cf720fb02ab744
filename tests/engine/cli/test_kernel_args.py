"""What every kernel-reading subcommand checks once the kernel compiles: -D names the kernel uses,
reduction declarations naming its loops, --simd-info's shape; and the argparse types for seeds and
budgets."""
from __future__ import annotations

import argparse
import json

import pytest

from engine.cli.kernel_args import (
    add_kernel_arguments,
    compile_from_args,
    positive_int,
    positive_seconds,
    seed,
)
from engine.errors import KernelError


def compile_args(*argv: str):
    parser = argparse.ArgumentParser()
    add_kernel_arguments(parser)
    return compile_from_args(parser.parse_args(list(argv)))


def test_defines_the_kernel_uses_are_accepted_even_a_type(bundled):
    space = compile_args(str(bundled("mm")), "-D", "I=8", "-D", "DATA_T=int16_t", "--preset", "tiny")
    assert space.kernel.sizes["I"] == 8


def test_reduction_loops_must_be_loops_of_the_kernel(bundled, tmp_path):
    info = tmp_path / "simd.json"
    info.write_text(json.dumps({"kernel": {"reduction": ["k", "zz"]}}))
    with pytest.raises(KernelError) as error:
        compile_args(str(bundled("mm")), "--preset", "tiny", "--simd-info", str(info))
    assert str(error.value) == f"{info}: reduction loop 'zz' is not a loop of the kernel (its loops: i, j, k)"
    text = bundled("mm").read_text().replace("#pragma scop", "#pragma systolic reduction(k, q)\n#pragma scop")
    kernel = tmp_path / "mm.c"
    kernel.write_text(text)
    line = text.splitlines().index("#pragma systolic reduction(k, q)") + 1
    with pytest.raises(KernelError) as error:
        compile_args(str(kernel), "--preset", "tiny")
    assert str(error.value) == f"{kernel}:{line}: reduction loop 'q' is not a loop of the kernel (its loops: i, j, k)"


@pytest.mark.parametrize("content", ['[1]', '{}', '{"kernel": ["k"]}', '{"kernel": {"reductions": ["k"]}}'])
def test_a_simd_info_file_of_the_wrong_shape_is_refused(bundled, tmp_path, content):
    info = tmp_path / "simd.json"
    info.write_text(content)
    with pytest.raises(KernelError, match='each with a "reduction" list'):
        compile_args(str(bundled("mm")), "--preset", "tiny", "--simd-info", str(info))


def test_argument_types_refuse_what_a_run_cannot_honour():
    assert seed("0") == 0 and seed(str(2**63 - 1)) == 2**63 - 1
    for bad in ("-1", str(2**63), "1.5", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            seed(bad)
    assert positive_seconds("0.5") == 0.5
    for bad in ("0", "-1", "nan", "inf", "-inf", "x"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_seconds(bad)
    assert positive_int("3") == 3
    for bad in ("0", "-2", "2.0", str(2**63)):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_int(bad)


def test_a_kernel_of_thousands_of_statements_fails_fast_naming_the_limit(write_kernel):
    from engine.limits import MAX_STATEMENTS
    body = "".join(f"      C[i][j] += A[i][k] * B[k][j] + {s};\n" for s in range(200))
    kernel = write_kernel("for (int i = 0; i < 8; i++)\n  for (int j = 0; j < 8; j++)\n"
                          "    for (int k = 0; k < 8; k++) {\n" + body + "    }\n",
                          prelude="float A[8][8]; float B[8][8]; float C[8][8];\n")
    with pytest.raises(KernelError) as error:
        compile_args(str(kernel))
    assert f"the scop holds 200 statements; the limit is {MAX_STATEMENTS}" in str(error.value)
    assert str(error.value).startswith(f"{kernel}:")
