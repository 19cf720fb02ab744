"""Bad input: every kernel the compiler cannot take is one KernelError (or LegalityError) that says
where (file:line:column) and why, in one line.

Each kernel is written into tmp_path by `kernel_file`; the expected place of an error is found with
`position_of(text, needle)` (1-based line and column of a unique piece of the source), so every test
states what the error must point at.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.compiler.design_space import compile_kernel
from engine.compiler.frontend import parse_kernel
from engine.errors import EngineError, KernelError, LegalityError, SourceLocation

from kernel_snippets import FOOTER, HEADER, MM_LOOPS, VALID_MM

ANY = object()  # "any column": the parser gives no column for this construct


def kernel_file(tmp_path: Path, text: str, name: str = "kernel.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def position_of(text: str, needle: str) -> tuple[int, int]:
    """1-based (line, column) of the only occurrence of `needle` in `text`."""
    assert text.count(needle) == 1, f"{needle!r} must occur exactly once in the kernel"
    offset = text.index(needle)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def expect_error(path: Path, error_class: type[KernelError], line: int | None, column, phrase: str,
                 **options) -> KernelError:
    """compile_kernel(path) fails with exactly `error_class`, at path:line[:column], saying `phrase`.

    `column` is an int, a tuple of acceptable ints, or ANY.
    """
    with pytest.raises(EngineError) as info:
        compile_kernel(path, **options)
    error = info.value
    assert type(error) is error_class, f"{type(error).__name__}: {error}"
    assert isinstance(error.location, SourceLocation), error
    assert error.location.file == str(path), error
    assert error.location.line == line, error
    if isinstance(column, tuple):
        assert error.location.column in column, error
    elif column is not ANY:
        assert error.location.column == column, error
    assert phrase in error.reason, error
    message = str(error)
    assert "\n" not in message
    assert message == f"{error.location}: {error.reason}"
    assert message.startswith(f"{path}:{line}:" if line is not None else f"{path}: ")
    # the reason must not repeat the place (e.g. "k.c:3: syntax error: k.c: ...")
    assert str(path) not in error.reason, error
    return error


# -- the baseline: the kernel the bad ones are variations of compiles ---------------------------

def test_the_valid_kernel_compiles(tmp_path):
    space = compile_kernel(kernel_file(tmp_path, VALID_MM))
    assert space.designs


def test_one_error_hierarchy():
    assert issubclass(KernelError, EngineError)
    assert issubclass(LegalityError, KernelError)
    error = KernelError("loop bound is not affine", SourceLocation("kernel.c", 12, 5))
    assert str(error) == "kernel.c:12:5: loop bound is not affine"
    assert str(KernelError("why", SourceLocation("kernel.c", 12))) == "kernel.c:12: why"
    assert str(KernelError("why", SourceLocation("kernel.c"))) == "kernel.c: why"


# -- syntax errors ------------------------------------------------------------------------------

def test_syntax_error_in_a_for_header(tmp_path):
    text = HEADER + "  for (int i = 0; i < N i++)\n    C[i][0] = 1;\n" + FOOTER
    line, column = position_of(text, "i++)")  # the parser stops at the token after 'N'
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "syntax error")


def test_syntax_error_missing_semicolon_points_at_its_line(tmp_path):
    text = HEADER + MM_LOOPS + "        C[i][j] += A[i][k] * B[k][j]\n" + FOOTER
    line, _ = position_of(text, "C[i][j] +=")
    expect_error(kernel_file(tmp_path, text), KernelError, line, ANY, "syntax error")


def test_syntax_error_incomplete_expression(tmp_path):
    text = HEADER + "  for (int i = 0; i < N; i++)\n    C[i][0] = A[i][0] * ;\n" + FOOTER
    line, _ = position_of(text, "A[i][0] * ;")
    expect_error(kernel_file(tmp_path, text), KernelError, line, ANY, "syntax error")


def test_syntax_error_unclosed_brace(tmp_path):
    text = HEADER + "  for (int i = 0; i < N; i++) {\n    C[i][0] = 1;\n" + FOOTER
    last_line = text.count("\n")  # the input ends after the function's '}'
    expect_error(kernel_file(tmp_path, text), KernelError, last_line, ANY, "syntax error")


# -- non-affine subscripts and bounds -----------------------------------------------------------

@pytest.mark.parametrize("subscript", ["i*k", "i/2"])
def test_non_affine_subscript(tmp_path, subscript):
    text = HEADER + MM_LOOPS + f"        C[i][j] += A[{subscript}][k] * B[k][j];\n" + FOOTER
    line, column = position_of(text, f"{subscript}]")
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, column, "is not affine")
    assert "subscript" in error.reason


def test_non_affine_loop_bound(tmp_path):
    text = HEADER + ("  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n"
                     "      for (int k = 0; k < i*j; k++)\n") + "        C[i][j] += A[i][k] * B[k][j];\n" + FOOTER
    line, column = position_of(text, "i*j")
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, column, "is not affine")
    assert "bound" in error.reason


# -- calls, pointers, while loops ---------------------------------------------------------------

def test_function_call(tmp_path):
    text = "#include <math.h>\n" + HEADER + MM_LOOPS + "        C[i][j] += exp(A[i][k]);\n" + FOOTER
    line, column = position_of(text, "exp")
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "call to 'exp'")


POINTER_GLOBAL = """\
#define N 8
float *A;
float C[N][N];
void kernel(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      C[i][j] = A[i];
#pragma endscop
}
"""
POINTER_PARAMETER = """\
#define N 8
void kernel(float *A, float C[N][N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    C[i][0] = A[i];
#pragma endscop
}
"""


@pytest.mark.parametrize("text", [POINTER_GLOBAL, POINTER_PARAMETER], ids=["global", "parameter"])
def test_array_declared_as_a_pointer(tmp_path, text):
    line, column = position_of(text, "A[i];")
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "'A' is a pointer")


def test_pointer_dereference(tmp_path):
    text = ("#define N 8\nfloat *p;\nfloat C[N][N];\nvoid kernel(void) {\n#pragma scop\n"
            "  for (int i = 0; i < N; i++)\n    C[i][0] = *p;\n" + FOOTER)
    line, column = position_of(text, "= *p")
    column += len("= ")
    # pycparser places a unary expression at its operand: accept the '*' or the 'p'
    expect_error(kernel_file(tmp_path, text), KernelError, line, (column, column + 1),
                 "pointer expression '*p'")


@pytest.mark.parametrize("loop, keyword", [
    ("    while (C[i][0] < 1)\n      C[i][0] += 1;\n", "while"),
    ("    do { C[i][0] += 1; } while (C[i][0] < 1);\n", "do {"),
], ids=["while", "do-while"])
def test_while_loop(tmp_path, loop, keyword):
    text = HEADER + "  for (int i = 0; i < N; i++)\n" + loop + FOOTER
    line, column = position_of(text, keyword)
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "while loops are not supported")


# -- sizes --------------------------------------------------------------------------------------

def test_missing_macro_value_in_a_loop_bound(tmp_path):
    text = "float C[8][8];\nvoid kernel(void) {\n#pragma scop\n" \
           "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < 8; j++)\n      C[i][j] = 1;\n" + FOOTER
    line, column = position_of(text, "N;")
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, column, "'N'")
    assert "#define N" in error.reason or "-D N" in error.reason


def test_missing_macro_value_in_an_array_size(tmp_path):
    text = "float A[M][8];\nvoid kernel(void) {\n#pragma scop\n" \
           "  for (int i = 0; i < 8; i++)\n    A[0][i] = 1;\n" + FOOTER
    line, column = position_of(text, "M")
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, column, "'M'")
    assert "#define M" in error.reason or "-D M" in error.reason


def test_minus_d_supplies_the_missing_macro(tmp_path):
    text = "float C[8][8];\nvoid kernel(void) {\n#pragma scop\n" \
           "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < 8; j++)\n      C[i][j] = 1;\n" + FOOTER
    space = compile_kernel(kernel_file(tmp_path, text), defines=["N=8"])
    assert space.designs


def test_minus_d_overrides_a_define(tmp_path):
    kernel = parse_kernel(kernel_file(tmp_path, VALID_MM), defines=["N=4"])
    assert kernel.sizes["N"] == 4
    assert kernel.arrays["A"].shape == (4, 4)
    assert parse_kernel(kernel_file(tmp_path, VALID_MM)).sizes["N"] == 8


@pytest.mark.parametrize("option", ["1N=4", "=4", "N-1=4", "N M=4"])
def test_minus_d_with_a_bad_name(tmp_path, option):
    with pytest.raises(KernelError) as info:
        parse_kernel(kernel_file(tmp_path, VALID_MM), defines=[option])
    message = str(info.value)
    assert "\n" not in message
    assert option in message and "-D" in message


def test_array_subscript_outside_the_declared_array(tmp_path):
    text = HEADER + MM_LOOPS + "        C[i][j] += A[i+1][k] * B[k][j];\n" + FOOTER
    line, statement_column = position_of(text, "C[i][j] +=")
    _, reference_column = position_of(text, "A[i+1]")
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, (statement_column, reference_column),
                         "goes outside 'A'")
    assert "[8][8]" in error.reason


# -- the scop region and the file ---------------------------------------------------------------

def test_empty_scop(tmp_path):
    text = HEADER + FOOTER
    line, _ = position_of(text, "#pragma scop")
    expect_error(kernel_file(tmp_path, text), KernelError, line, ANY, "empty")


def test_no_scop_pragma(tmp_path):
    text = "#define N 8\nfloat A[N][N];\nvoid kernel(void) {\n" \
           "  for (int i = 0; i < N; i++)\n    A[i][0] = 1;\n}\n"
    expect_error(kernel_file(tmp_path, text), KernelError, None, None, "no #pragma scop")


def test_scop_without_endscop(tmp_path):
    text = HEADER + "  for (int i = 0; i < N; i++)\n    C[i][0] = 1;\n}\n"
    line, _ = position_of(text, "#pragma scop")
    expect_error(kernel_file(tmp_path, text), KernelError, line, ANY, "#pragma endscop")


def test_file_that_does_not_exist(tmp_path):
    path = tmp_path / "missing.c"
    expect_error(path, KernelError, None, None, "no such kernel file")


def test_missing_include(tmp_path):
    text = '#include "x.h"\n' + VALID_MM
    line, _ = position_of(text, '#include "x.h"')
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, ANY, "x.h")
    assert "cannot find" in error.reason


def test_relative_path_is_named_as_given(tmp_path, monkeypatch):
    text = HEADER + MM_LOOPS + "        C[i][j] += A[i*k][k] * B[k][j];\n" + FOOTER
    kernel_file(tmp_path, text)
    monkeypatch.chdir(tmp_path)
    line, column = position_of(text, "i*k")
    with pytest.raises(KernelError) as info:
        compile_kernel("kernel.c")
    assert str(info.value).startswith(f"kernel.c:{line}:{column}: ")


# -- unsupported control flow and types ---------------------------------------------------------

def test_non_unit_loop_step(tmp_path):
    text = HEADER + "  for (int i = 0; i < N; i += 2)\n    for (int j = 0; j < N; j++)\n      C[i][j] = 1;\n" + FOOTER
    line, column = position_of(text, "i += 2")
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "unit stride")


@pytest.mark.parametrize("declaration, type_text", [
    ("struct pt { float x; };\nstruct pt A[N][N];\n", "struct pt"),
    ("long double A[N][N];\n", "long double"),
], ids=["struct", "long-double"])
def test_unsupported_element_type(tmp_path, declaration, type_text):
    text = ("#define N 8\n" + declaration + "float C[N][N];\nvoid kernel(void) {\n#pragma scop\n"
            "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n      C[i][j] = A[i][j];\n" + FOOTER)
    line, column = position_of(text, "A[N][N]")
    error = expect_error(kernel_file(tmp_path, text), KernelError, line, column, f"'{type_text}'")
    assert "not supported" in error.reason and "'A'" in error.reason


# -- scalars carried across iterations ----------------------------------------------------------

def test_local_scalar_carried_across_iterations(tmp_path):
    text = HEADER + ("  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++) {\n"
                     "      float s = 0;\n      for (int k = 0; k < N; k++)\n        s = s + A[i][k];\n"
                     "    }\n") + FOOTER
    line, column = position_of(text, "s = s +")
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "scalar 's'")


def test_global_scalar_carried_across_iterations(tmp_path):
    text = ("#define N 8\nfloat A[N][N];\nfloat s;\nvoid kernel(void) {\n#pragma scop\n"
            "  for (int i = 0; i < N; i++)\n    for (int k = 0; k < N; k++)\n      s += A[i][k];\n" + FOOTER)
    line, column = position_of(text, "s += ")
    expect_error(kernel_file(tmp_path, text), KernelError, line, column, "scalar 's'")


# -- legality: non-uniform dependences ----------------------------------------------------------

TRANSPOSE = """\
#define N 8
float A[N][N];
void kernel(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = A[j][i] + 1;
#pragma endscop
}
"""
SKEWED = """\
#define N 8
float A[2*N][1];
void kernel(void) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i+j][0] = A[i][0] + 1;
#pragma endscop
}
"""


@pytest.mark.parametrize("text, statement", [
    (TRANSPOSE, "A[i][j] = A[j][i] + 1;"),
    (SKEWED, "A[i+j][0] = A[i][0] + 1;"),
], ids=["transpose", "skewed"])
def test_non_uniform_dependence(tmp_path, text, statement):
    line, _ = position_of(text, statement)
    error = expect_error(kernel_file(tmp_path, text), LegalityError, line, None, "is not uniform")
    assert "flow dependence S0[" in error.reason and "-> S0[" in error.reason
    assert "on 'A' is not uniform" in error.reason
    assert str(error).startswith(f"{tmp_path / 'kernel.c'}:{line}: flow dependence S0[")


@pytest.mark.parametrize("directive", ["#define", "#undef", "#ifdef\n#endif", "#ifndef\n#endif"])
def test_a_directive_without_a_name_is_one_line_naming_it(tmp_path, directive):
    kernel = tmp_path / "k.c"
    kernel.write_text(directive + "\n#define N 4\nfloat A[N];\nvoid k(void) {\n#pragma scop\n"
                      "  for (int i = 0; i < N; i++)\n    A[i] = 1;\n#pragma endscop\n}\n")
    name = directive.split()[0]
    with pytest.raises(KernelError, match=f"k.c:1: preprocessor: {name} needs a macro name"):
        compile_kernel(kernel)
