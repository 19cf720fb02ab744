"""An input chain whose instances each keep their own box of the block they pass on moves words that
divide where those boxes start (io_network.split_steps): CNN's fi along w with a halo (w + q), two
outputs per PE along w, so the boxes start every 2 elements of a 16-element row and overlap. The
model counts one iteration per word of the chain's packing factor, and the exported chain moves one
word per iteration (its chunk is the word), so the two count the same loop; with a 4-element word
the code moved 2-element chunks, twice the iterations the model counted (the CNN 16x16x14x14
searched best of w-i__o-h-w.i-p-q: model 6,183 against 10,287 cycles in the timed C simulation)."""
from __future__ import annotations

import re

from engine.compiler.design_space import compile_kernel
from engine.export.hls_kernel import kernel_sources
from engine.compiler.descriptor import build_descriptor
from engine.models.cache import shared_model
from engine.models.device import load_device
from engine.models.report import evaluate_configuration
from engine.resources import KERNELS


def test_the_w_chain_moves_the_words_the_model_counts():
    sizes = {"O": 2, "I": 2, "H": 2, "W": 14, "P": 3, "Q": 3}
    space = compile_kernel(KERNELS / "cnn.c", defines={k: str(v) for k, v in sizes.items()})
    design = space.design("w-i__o-h-w.i-p-q")
    model = shared_model(space, design, load_device())
    params = {p.name: (p.upper if p.role == "array_partition" else 1) for p in design.params if p.tunable}
    params.update(w_t1=14, w_t2=2)  # 7 PEs along w, each keeping 2 + 3 - 1 = 4 elements of a 16-element row
    report = evaluate_configuration(model, params)
    values = report["params"]
    assert values["fi_in_pack_l2"] == 2  # divides 2, where the boxes start; 16 (the row) alone would allow 4 or more
    cpp = kernel_sources(build_descriptor(space, design, model.architecture), values)["kernel_kernel.cpp"]
    head = cpp[cpp.index("static void fi_L2_in_head("):]
    word, chunk = re.search(r"chunk_writer<fi_t, (\d+), (\d+)> forward;", head).groups()
    assert int(word) == int(chunk) == values["fi_in_pack_l2"]
