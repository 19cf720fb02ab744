"""AutoSA's documented --sa-sizes strings, verbatim (docs/examples/*.rst and autosa_tests/*/README.md of
UCLA-VAST/AutoSA), each giving AutoSA's PE array and DSP count: the board's DSP figure where the docs
give one (MM int8 6,144, int16 8,192, fp32 large 8,320, CNN large 8,960, MTTKRP and TTMc 8,192), the
docs' "2x2 systolic array" for the DNN operators, and otherwise the array AutoSA's rules make of the
string (PEs along a space loop: its array_part factor over its latency factor, over the SIMD factor
when SIMD is on it; fp32 MAC 5 DSPs). The band AutoSA partitions is its own (sa_sizes.autosa_band):
MTTKRP (i,j,k), TTMc (i,j,k,l), CNN (o,h,w,i)."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
import sympy

from engine.cli.main import main
from engine.compiler.design_space import compile_kernel
from engine.compiler.sa_sizes import autosa_band, select, space_time_order, to_sa_sizes
from engine.errors import DesignError
from engine.models.device import load_device
from engine.models.evaluate import PerformanceModel
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS

DC = """#define O 16
#define R 8
#define C 8
#define K 3
float cin[R + K - 1][C + K - 1][O];
float w[K][K][O];
float cout[R][C][O];
void kernel(void) {
#pragma scop
  for (int o = 0; o < O; o++)
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) {
        cout[r][c][o] = 0;
        for (int p = 0; p < K; p++)
          for (int q = 0; q < K; q++)
            cout[r][c][o] = cout[r][c][o] + cin[r + p][c + q][o] * w[p][q][o];
      }
#pragma endscop
}
"""
PC = """#define O 16
#define I 16
#define R 8
#define C 8
#define K 3
float cin[R + K - 1][C + K - 1][I];
float w[O][K][K][I];
float cout[R][C][O];
void kernel(void) {
#pragma scop
  for (int o = 0; o < O; o++)
    for (int r = 0; r < R; r++)
      for (int c = 0; c < C; c++) {
        cout[r][c][o] = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < K; p++)
            for (int q = 0; q < K; q++)
              cout[r][c][o] = cout[r][c][o] + cin[r + p][c + q][i] * w[o][p][q][i];
      }
#pragma endscop
}
"""
FC = """#define I 16
#define J 16
float cin[I][J];
float w[J];
float cout[I];
void kernel(void) {
#pragma scop
  for (int i = 0; i < I; i++) {
    cout[i] = 0;
    for (int j = 0; j < J; j++)
      cout[i] = cout[i] + cin[i][j] * w[j];
  }
#pragma endscop
}
"""
TEXTS = {"pc.c": PC, "fc.c": FC, "dc.c": DC}

MM = ("mm.c", ("I=64", "J=64", "K=64"))
CNN = ("cnn.c", ("O=16", "I=16", "H=16", "W=16", "P=3", "Q=3"))  # AutoSA's cnn: r, c are our h, w


def _s(space_time, array_part, latency, simd=None, extra=""):
    entries = [f"kernel[]->space_time[{space_time}]", f"kernel[]->array_part[{array_part}]",
               f"kernel[]->latency[{latency}]"] + ([f"kernel[]->simd[{simd}]"] if simd is not None else [])
    return "{" + ";".join(entries) + extra + "}"


# name -> (kernel, defines, string, space loops, PE grid, SIMD lanes, DSP)
COMMANDS = {
    "mm[i]": (*MM, _s(0, "32,32,32", "8,8", 2), ("i",), [4], 2, 40),
    "mm[j]": (*MM, _s(1, "32,32,32", "8,8", 2), ("j",), [4], 2, 40),
    "mm[k]": (*MM, _s(2, "4,32,32", "8,8", 2), ("k",), [2], 2, 20),
    "mm[i,j]": (*MM, _s(3, "16,16,16", "8,8", 2), ("i", "j"), [2, 2], 2, 40),
    "mm[i,k]": (*MM, _s(4, "32,4,32", "16,16", 2), ("i", "k"), [2, 2], 2, 40),
    "mm[j,k]": (*MM, _s(5, "32,4,32", "16,16", 2), ("j", "k"), [2, 2], 2, 40),
    "mm_int16": ("mm.c", ("I=64", "J=64", "K=64", "DATA_T=uint16_t"), _s(3, "16,16,16", "8,8", 2), ("i", "j"),
                 [2, 2], 2, 8),
    "mm_large": ("mm.c", ("I=1040", "J=1024", "K=1024"), _s(3, "260,256,512", "20,16", 8), ("i", "j"),
                 [13, 16], 8, 8320),
    "mm_int8_large": ("mm.c", ("I=1056", "J=1024", "K=1024", "DATA_T=int8_t"), _s(3, "264,256,64", "11,32", 64),
                      ("i", "j"), [24, 8], 64, 6144),
    "mm_int16_large": ("mm.c", ("I=1024", "J=1024", "K=1024", "DATA_T=uint16_t"), _s(3, "256,256,32", "16,16", 32),
                       ("i", "j"), [16, 16], 32, 8192),
    "mm_hcl": (*MM, _s(3, "16,16,16", "8,1"), ("i", "j"), [2, 16], 1, 160),
    "mm_hcl_simd": (*MM, _s(3, "16,16,16", "8,1", "8,1"), ("i", "j"), [2, 16], 8, 1280),
    "mm_intel": (*MM, _s(3, "16,16,16", "8,8", 2).replace("latency", "array_part_L2[2,2,2];kernel[]->latency"),
                 ("i", "j"), [2, 2], 2, 40),
    "mm_hbm": (*MM, _s(3, "32,32,32", "8,8", 2, ";kernel[]->hbm_A[2];kernel[]->hbm_B[2];kernel[]->hbm_C_drain[2]"),
               ("i", "j"), [4, 4], 2, 160),
    "cnn README": (*CNN, _s(4, "8,8,4,8", "4,2,4", "1,1,1,2"), ("o", "h"), [2, 4], 2, 80),
    "cnn[o]": (*CNN, _s(0, "8,4,4,8", "4,2,4", "1,1,1,2"), ("o",), [2], 2, 20),
    "cnn[r]": (*CNN, _s(1, "4,8,4,8", "2,4,2", "1,1,1,2"), ("h",), [2], 2, 20),
    "cnn[c]": (*CNN, _s(2, "4,8,4,8", "2,4,2", "1,1,1,2"), ("w",), [2], 2, 20),
    "cnn[i]": (*CNN, _s(3, "4,8,4,4", "2,2,2", "1,1,2"), ("i",), [2], 2, 20),
    "cnn[o,r]": (*CNN, _s(4, "8,4,4,8", "4,2,2", "1,1,1,2"), ("o", "h"), [2, 2], 2, 40),
    "cnn[o,c]": (*CNN, _s(5, "8,4,4,8", "4,2,2", "1,1,1,2"), ("o", "w"), [2, 2], 2, 40),
    "cnn[o,i]": (*CNN, _s(6, "8,4,4,4", "2,2,4", "1,1,2"), ("o", "i"), [4, 2], 2, 80),
    "cnn[r,c]": (*CNN, _s(7, "4,4,8,8", "2,2,2", "1,1,1,2"), ("h", "w"), [2, 2], 2, 40),
    "cnn[r,i]": (*CNN, _s(8, "4,8,8,4", "2,2,2", "1,1,2"), ("h", "i"), [2, 4], 2, 80),
    "cnn[c,i]": (*CNN, _s(9, "4,8,8,4", "2,2,2", "1,1,2"), ("w", "i"), [2, 4], 2, 80),
    "cnn_large": ("cnn.c", ("O=640", "I=512", "H=56", "W=56", "P=3", "Q=3"), _s(4, "64,56,14,64", "4,4,7", "1,1,8"),
                  ("o", "h"), [16, 14], 8, 8960),
    "mttkrp_large": ("mttkrp.c", ("I=256", "J=336", "K=256", "L=256"), _s(3, "128,128,2", "16,8", "8,1"),
                     ("i", "j"), [8, 16], 8, 8192),
    "ttmc_large": ("ttmc.c", ("I=128", "J=128", "K=128", "L=128", "M=128"), _s(4, "16,64,16,32", "1,8,8", "8,1"),
                   ("i", "j"), [16, 8], 8, 8192),
    "dnn_ops PC": ("pc.c", (), _s(4, "8,8,4,8", "4,4,4", "1,1,1,2"), ("o", "r"), [2, 2], 2, 40),
    "dnn_ops FC": ("fc.c", (), _s(2, "8,4", "4", 2), ("i", "j"), [2, 2], 2, 40),
}


@functools.cache
def _space(kernel: str, defines: tuple[str, ...], folder: Path):
    path = KERNELS / kernel
    if kernel in TEXTS:
        path = folder / kernel
        path.write_text(TEXTS[kernel])
    return compile_kernel(path, defines=list(defines))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("autosa-kernels")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_documented_command_gives_autosas_array(folder, name):
    kernel, defines, text, space_loops, grid, lanes, dsp = COMMANDS[name]
    space = _space(kernel, defines, folder)
    selection = select(space, text)
    assert selection.design.space_loops == space_loops
    model = PerformanceModel(space, selection.design, load_device("u250"))
    values = {sympy.Symbol(k): v for k, v in selection.params.items()}
    assert [int(sympy.sympify(e).subs(values)) for e in model.architecture.pe_grid] == grid
    simd = selection.design.simd_loop
    assert (selection.params[f"{simd}_t2"] if simd else 1) == lanes
    assert evaluate_configuration(model, selection.params)["dsp"] == dsp


def test_autosas_band_ends_after_the_first_reduction_loop(folder):
    """MTTKRP's l, TTMc's m and CNN's p, q are reduced after another reduction loop: AutoSA's
    dependences go back along them, so its band (and its candidate list) stops before them."""
    assert autosa_band(_space("mttkrp.c", ("I=8", "J=8", "K=8", "L=8"), folder)) == ("i", "j", "k")
    ttmc = _space("ttmc.c", ("I=4", "J=4", "K=4", "L=4", "M=4"), folder)
    assert autosa_band(ttmc) == ("i", "j", "k", "l")
    assert len(space_time_order(ttmc)) == 10 and space_time_order(ttmc)[4] == ("i", "j")
    assert autosa_band(_space(*CNN, folder)) == ("o", "h", "w", "i")
    assert autosa_band(_space(*MM, folder)) == ("i", "j", "k")


DC_COMMAND = _s(4, "4,4,4,3", "1,2,1", "1,2,1,1")  # docs/examples/dnn_ops.rst, with --simd-touch-space


def test_depthwise_conv_without_simd_touch_space_is_refused_naming_the_flag(folder, capsys):
    """AutoSA's DC array vectorises the parallel space loop o, a design listed only with
    --simd-touch-space (off by default, as in AutoSA): one line naming simd and the flag."""
    path = folder / "dc.c"
    path.write_text(DC)
    assert main(["model", str(path), "--sa-sizes", DC_COMMAND]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "simd[1,2,1,1]" in err and "--simd-touch-space" in err, err


def test_depthwise_conv_with_simd_touch_space_gives_autosas_2x2_array(folder):
    """The README's "2x2 systolic array": o 4 / latency 1 / 2 lanes, c 4 / 2; 4 PEs x 2 lanes x an
    fp32 MAC (5 DSPs). The string reads back as written (latency 1 on the SIMD loop o)."""
    path = folder / "dc.c"
    path.write_text(DC)
    space = compile_kernel(path, simd_touch_space=True)
    selection = select(space, DC_COMMAND)
    design = selection.design
    assert design.space_loops == ("o", "c") and design.simd_loop == "o" and design.simd_on_space
    assert not design.simd.is_reduction and "o" not in design.latency_hiding_loops
    model = PerformanceModel(space, design, load_device("u250"))
    values = {sympy.Symbol(k): v for k, v in selection.params.items()}
    assert [int(sympy.sympify(e).subs(values)) for e in model.architecture.pe_grid] == [2, 2]
    assert evaluate_configuration(model, selection.params)["dsp"] == 40
    assert to_sa_sizes(space, design, selection.params) == _s(4, "4,4,4,3", "1,2,1", 2)
    with pytest.raises(DesignError, match=r"latency\[2,2,1\]: factor 2 for o, which .* vectorises; expected 1"):
        select(space, _s(4, "4,4,4,3", "2,2,1", "1,2,1,1"))


@pytest.mark.parametrize("name", ["cnn README", "mm[i,k]", "dnn_ops PC"])
def test_simd_touch_space_keeps_autosas_reduction_simd(folder, name):
    """With the flag, strings AutoSA runs with --simd-touch-space still vectorise the reduction loop
    (AutoSA prefers it): the designs with SIMD on a parallel space loop are only a fallback."""
    kernel, defines, text, *_ = COMMANDS[name]
    plain = select(_space(kernel, defines, folder), text)  # writes the kernel text into the folder
    path = folder / kernel if kernel in TEXTS else KERNELS / kernel
    with_flag = select(compile_kernel(path, defines=list(defines), simd_touch_space=True), text)
    assert with_flag.design.id == plain.design.id and with_flag.params == plain.params


def test_depthwise_conv_exports_and_passes_csim(folder, tmp_path, capsys):
    """AutoSA's DC command as written (its flags; --host-serialize is our default layout) at a small
    size: exported, and the C simulation matches the loop nest (each lane its own output channel)."""
    path = folder / "dc.c"
    path.write_text(DC)
    simd_info = tmp_path / "dc_simd_info.json"
    simd_info.write_text('{"kernel4": {"reduction": ["y", "y"]}}')  # AutoSA's file, for another kernel name
    out = tmp_path / "dc"
    assert main(["export", str(path), "-D", "O=8", "-D", "R=4", "-D", "C=4", "--simd-info", str(simd_info),
                 "--simd-touch-space", "--sa-sizes", DC_COMMAND, "-o", str(out), "--floorplan", "none"]) == 0
    assert "--design o-c__o-r-c.p-q__simd-o" in capsys.readouterr().err
    assert main(["csim", str(out)]) == 0
    assert "PASS" in capsys.readouterr().out


def test_designs_autosa_lists_autosas_candidates_beside_our_ids(capsys):
    assert main(["designs", str(KERNELS / "mttkrp.c"), "--preset", "tiny", "--autosa"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("mttkrp: AutoSA's band (i,j,k), then l outside it: 6 space_time candidates")
    row = next(line for line in out if line.strip().startswith("space_time[3]"))
    assert "[i,j]" in row and "i-j__i-j.k-l" in row
    assert out[-1].strip().startswith("not in AutoSA's list (24):") and "l__i-j.k-l" in out[-1]


def test_hbm_entries_on_an_hbm_board(capsys):
    text = COMMANDS["mm_hbm"][2]
    assert main(["model", str(KERNELS / "mm.c"), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--device", "u280",
                 "--sa-sizes", text, "--json"]) == 0
    err = capsys.readouterr().err
    assert "hbm_A[2], hbm_B[2], hbm_C[2]: the export links each array through one m_axi port" in err


def test_hbm_entries_bind_each_array_to_that_many_pseudo_channels(tmp_path, capsys):
    """AutoSA's mm_hbm connectivity.cfg puts A_0, A_1 on HBM[0], HBM[1], B on 2 and 3, C on 4 and 5;
    here each array's one port takes the same channels as a run."""
    text = COMMANDS["mm_hbm"][2]
    out = tmp_path / "hbm"
    assert main(["export", str(KERNELS / "mm.c"), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--device", "u280",
                 "--sa-sizes", text, "-o", str(out), "--floorplan", "none"]) == 0
    links = [line for line in (out / "connectivity.cfg").read_text().splitlines() if line.startswith("sp=")]
    assert links == ["sp=kernel0_1.A:HBM[0:1]", "sp=kernel0_1.B:HBM[2:3]", "sp=kernel0_1.C:HBM[4:5]"]


def test_an_hbm_entry_past_the_board_is_named_with_what_it_may_ask(capsys):
    text = ("{kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8,8];"
            "kernel[]->hbm_A[2];kernel[]->hbm_B[31]}")
    assert main(["export", str(KERNELS / "mm.c"), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--device", "u280",
                 "--sa-sizes", text]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("error: --sa-sizes hbm_B[31]: HBM channels 2..32"), err
    assert "(HBM[0..31]): expected hbm_B[1..30]" in err


@pytest.mark.parametrize("extra, device, phrase", [
    (";kernel[]->simd[2,2]", "u250", "simd[2,2] vectorises 2 loops; AutoSA vectorises one"),
    (";kernel[]->hbm_A[2]", "u250", "hbm_A[2]: the Xilinx Alveo U250 has DDR4 banks, not HBM pseudo-channels"),
    (";kernel[]->hbm_A[40]", "u280", "40 HBM channels in all; the Xilinx Alveo U280 has 32 pseudo-channels"),
    (";kernel[]->hbm_X[2]", "u280", "hbm_X[2]: mm has no array X in DRAM"),
    (";kernel[]->hbm_A[0]", "u280", "hbm_A[0]: expected one positive number of HBM channels"),
    (";kernel[]->array_part_L2[2,2]", "u250", "array_part_L2[2,2]: expected one positive factor per array_part"),
])
def test_bad_entries_are_one_line_exit_2(capsys, extra, device, phrase):
    text = "{kernel[]->space_time[3];kernel[]->array_part[16,16,16];kernel[]->latency[8,8]" + extra + "}"
    assert main(["model", str(KERNELS / "mm.c"), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--device", device,
                 "--sa-sizes", text]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and phrase in err, err


def test_designs_takes_the_string_and_names_the_design(capsys):
    text = COMMANDS["mttkrp_large"][2]
    assert main(["designs", str(KERNELS / "mttkrp.c"), "-D", "I=256", "-D", "J=336", "-D", "K=256", "-D", "L=256",
                 "--sa-sizes", text]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].startswith("i-j__i-j.k-l ")
    assert out[3].startswith("--sa-sizes is: --design i-j__i-j.k-l --param i_t1=128 --param j_t1=128 --param k_t1=2 "
                             "--param l_t1=256 --param i_t2=16 --param j_t2=8 --param l_t2=8")


def test_search_tunes_the_design_the_string_names(capsys):
    text = COMMANDS["mm[i,j]"][2]
    args = ["search", str(KERNELS / "mm.c"), "-D", "I=64", "-D", "J=64", "-D", "K=64", "--sa-sizes", text,
            "--method", "random", "--samples", "50", "--no-store", "--json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "tuning i-j__i-j.k" in captured.err
    assert '"i-j__i-j.k"' in captured.out and '"i__i-j.k"' not in captured.out
    assert main(args + ["--design", "i__i-j.k"]) == 2
    assert "give it or --design, not both" in capsys.readouterr().err


@pytest.mark.slow
def test_depthwise_conv_at_autosas_size_times_as_the_model(folder, tmp_path, capsys):
    """AutoSA's DC command at its own size (16 channels, 8x8, 3x3): the timed C simulation of the
    export (2 lanes on o, each its own output, drained two a word) within 5% of the model."""
    import json
    path = folder / "dc.c"
    path.write_text(DC)
    out = tmp_path / "dc"
    assert main(["export", str(path), "--simd-touch-space", "--sa-sizes", DC_COMMAND, "-o", str(out),
                 "--floorplan", "none"]) == 0
    capsys.readouterr()
    assert main(["csim", str(out), "--timed", "--json"]) == 0
    timed = json.loads(capsys.readouterr().out)
    assert timed["passed"] and abs(timed["model_error"]) < 0.05, timed
