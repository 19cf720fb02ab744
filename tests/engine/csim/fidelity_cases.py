"""Configurations on which the model, the cycle simulator and the timed C simulation of the exported
code are compared (tests/engine/csim/test_fidelity.py, bench/bench_fidelity.py): every dataflow
class of MM (2-D, 1-D, reduction in space, a k-space 2-D, SIMD on the space loop k), CNN, float /
int16 / int8, and partitioning factors that do not divide their loops."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FidelityCase:
    kernel: str
    design: str
    defines: tuple[tuple[str, object], ...]
    params: tuple[tuple[str, int], ...]

    @property
    def label(self) -> str:
        defines = dict(self.defines)
        sizes = "x".join(str(v) for k, v in self.defines if k != "DATA_T")
        return f"{self.kernel} {self.design} {sizes} {defines.get('DATA_T', 'float')}"


def case(kernel: str, design: str, defines: dict, **params: int) -> FidelityCase:
    return FidelityCase(kernel, design, tuple(defines.items()), tuple(params.items()))


MM64 = {"I": 64, "J": 64, "K": 64}
CNN = {"O": 16, "I": 16, "H": 14, "W": 14, "P": 3, "Q": 3}

SAMPLE = (
    case("mm", "i-j__i-j.k", MM64, i_t1=16, j_t1=12, k_t1=16, i_t2=4, j_t2=3, k_t2=4),        # j_t1 ∤ 64
    case("mm", "i-j__i-j.k", {**MM64, "DATA_T": "int8_t"}, i_t1=16, j_t1=16, k_t1=32, i_t2=4, j_t2=4, k_t2=8),
    case("mm", "i__i-j.k", {"I": 60, "J": 50, "K": 70}, i_t1=20, j_t1=25, k_t1=14, i_t2=2, j_t2=5, k_t2=2),
    case("mm", "k__i-j.k", MM64, i_t1=16, j_t1=16, k_t1=8, i_t2=4, j_t2=4),
    case("mm", "j-k__i-j.k", {**MM64, "DATA_T": "int16_t"}, i_t1=16, j_t1=16, k_t1=4, j_t2=4, i_t2=4),
    case("cnn", "o-h__o-h-w.i-p-q", CNN, o_t1=8, h_t1=7, w_t1=14, i_t1=16, p_t1=3, q_t1=3, o_t2=2, h_t2=1,
         w_t2=2, i_t2=4),
    *(RELOAD := (
        # designs that revisit an output block: sequential passes that read partial results back
        # (engine/compiler/architecture/passes.py); 4 k tiles, C interior / carried from PE to PE
        case("mm", "i-j__i-k.j", MM64, i_t1=16, j_t1=16, k_t1=16, i_t2=4, j_t2=4, k_t2=4),
        case("mm", "i-k__i-k.j", {**MM64, "DATA_T": "int16_t"}, i_t1=16, j_t1=16, k_t1=16, i_t2=4, j_t2=4),
        case("cnn", "o-h__o-i-p-q.h-w", CNN, o_t1=8, h_t1=7, w_t1=14, i_t1=8, p_t1=3, q_t1=3, o_t2=2, h_t2=1,
             w_t2=2, i_t2=4),
        # C read back through a natural port (PEs along i and j), each PE's box one row: the storer
        # writes the boxes of the two PEs along j one after another (runs of two words, not one)
        case("mm", "i-j__j-k.i", MM64, i_t1=8, j_t1=32, k_t1=16, i_t2=1, j_t2=16, k_t2=8),
    )),
)

FULL_SIZE = (
    # issue 13's device-filling MM configuration, on a 520x512x1024 slice of the problem
    case("mm", "i-j__i-j.k", {"I": 520, "J": 512, "K": 1024}, i_t1=260, j_t1=256, k_t1=512, i_t2=20, j_t2=16,
         k_t2=8),
    # a CNN configuration with 16 x 14 PEs and SIMD 8 (on i), on a 64x64x28x28 3x3 layer
    case("cnn", "o-h__o-h-w.i-p-q", {"O": 64, "I": 64, "H": 28, "W": 28, "P": 3, "Q": 3}, o_t1=64, h_t1=28, w_t1=28,
         i_t1=64, p_t1=3, q_t1=3, o_t2=4, h_t2=2, w_t2=4, i_t2=8),
)

# SIMD on a space loop (AutoSA --simd-touch-space --local-reduce): the counterparts of the k-space
# designs above, and a CNN design vectorising its space loop i
SIMD_ON_SPACE = (
    case("mm", "k__i-j.k__simd-k", MM64, i_t1=16, j_t1=16, k_t1=16, i_t2=4, j_t2=4, k_t2=4),
    case("mm", "j-k__i-j.k__simd-k", {**MM64, "DATA_T": "int16_t"}, i_t1=16, j_t1=16, k_t1=16, i_t2=4, j_t2=4,
         k_t2=4),
    case("cnn", "o-i__o-h-w.i-p-q__simd-i", CNN, o_t1=8, h_t1=7, w_t1=14, i_t1=16, p_t1=3, q_t1=3, o_t2=2, h_t2=7,
         w_t2=2, i_t2=4),
)
SAMPLE = SAMPLE + SIMD_ON_SPACE

# the tuner's searched bests (bench/bench_fidelity.py --cases searched), scaled down: MM 64^3 k__i-k.j
# loads 16 blocks of A of 4 tiles each, and the exporter joins each load with the feed of one tile
# (io_modules.py): the simulator's ping-pong tokens let the load overlap the whole block (-7.8%,
# issue 27; at 128^3, -22.7%)
SEARCHED = (
    case("mm", "k__i-k.j", MM64, i_t1=8, j_t1=32, k_t1=64, i_t2=8, j_t2=8),
    # MM 128^3 i-k__i-k.j's searched best scaled down: B loads a block per tile at the DRAM's pace, but
    # only two blocks ahead of the PEs, which wait for A's first block to cross its feeder rows (model
    # -9.0% of the timed C simulation when B's chain was timed from the DRAM's first read; docs/sim.md 6)
    case("mm", "i-k__i-k.j", MM64, i_t1=16, j_t1=4, k_t1=32, i_t2=8, j_t2=1),
    # MM 64^3 j-k__i-j.k's searched best, one output tile: C is summed along k from PE to PE, so the head
    # of C_L2_out sends once the last PE of its k chain has its sums out (model -8.3% of the timed C
    # simulation's 1,589 when it sent from the first PE's: docs/sim.md item 10)
    case("mm", "j-k__i-j.k", MM64, i_t1=64, i_t2=16, j_t1=64, j_t2=8, k_t1=8),
    # MM 64^3 j-k__i-k.j__simd-k 13/1/64/16/64/4 scaled down: B is stored [j][k] (SIMD along k), so the
    # 4 rows of B feeders along j get their parts of B_L2_in's block one after the other, and A, passed
    # from row to row, holds the first rows back with the last (model / simulator -7.4% of the timed
    # C simulation's 1,235 when the rows' parts were placed in B[k][j] order: docs/sim.md item 6)
    case("mm", "j-k__i-k.j__simd-k", {"I": 26, "J": 64, "K": 32}, i_t1=13, i_t2=1, j_t1=64, j_t2=16, k_t1=32,
         k_t2=4),
    # MM 64^3 i-k__j-k.i 18/1/32/1/64 scaled down: A's DRAM loader is the longest stage, and after its last
    # word the last of the 18 rows still unpacks its part of the block (4 words into 64 elements) before
    # its feeders along j have it (model -5.5% of the timed C simulation's 704 when A's path ended one PE
    # block after the loader: docs/sim.md item 11)
    case("mm", "i-k__j-k.i", {"I": 18, "J": 8, "K": 64}, i_t1=18, i_t2=1, j_t1=2, j_t2=1, k_t1=64),
)
SAMPLE = SAMPLE + SEARCHED

# partial results read back through a natural port (fo in one-beat bursts, 65/16 cycles a word): the
# storer's tile and box loops are one flattened pipelined loop a pass, so its port catches up on the
# last event's words after waiting for the PEs (docs/sim.md item 9); before, the model and the
# simulator paced every event's words from its own first one: 4,181 / 4,184 against 3,956 (+5.7%)
READ_BACK = (
    case("cnn", "h-i__h-w-i-p-q.o", {"O": 10, "I": 4, "H": 4, "W": 2, "P": 3, "Q": 3}, o_t1=5, h_t1=4, w_t1=1,
         i_t1=2, p_t1=3, q_t1=3, o_t2=1, h_t2=1, w_t2=1, q_t2=1),
)
SAMPLE = SAMPLE + READ_BACK
