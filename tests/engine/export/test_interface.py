import numpy as np
import pytest

from engine.compiler.descriptor import build_descriptor
from engine.compiler.design_space import compile_kernel
from engine.export import kernel_interface
from engine.models.device import load_device
from engine.models.cache import shared_model  # each design's model built once a session (export_project too)
from engine.resources import KERNELS


def _descriptor(kernel, design_id, defines, params):
    space = compile_kernel(KERNELS / kernel, defines=defines)
    design = space.design(design_id)
    model = shared_model(space, design, load_device("u250"))
    values = dict(params)
    values.update({k: int(np.asarray(v)) for k, v in model.inferred_packing(params).items()})
    return build_descriptor(space, design, model.architecture), values


@pytest.fixture(scope="module")
def mm_odd():
    return _descriptor("mm.c", "i-j__i-j.k", {"I": "60", "J": "50", "K": "70"},
                       {"i_t1": 16, "j_t1": 12, "k_t1": 16, "i_t2": 4, "j_t2": 3, "k_t2": 4})


def test_mm_ports_are_padded_to_whole_tiles_and_words(mm_odd):
    descriptor, values = mm_odd
    ports = kernel_interface(descriptor, values).ports
    assert [(p.array, p.direction) for p in ports] == [("A", "in"), ("B", "in"), ("C", "out")]
    a, b, c = ports
    assert a.shape == (60, 70) and b.shape == (70, 50) and c.shape == (60, 50)
    assert a.padded_shape[0] == 64 and b.padded_shape[1] >= 60 and c.padded_shape[0] == 64
    assert a.padded_shape[1] % a.word_elements == 0 and a.padded_shape[1] >= 80
    assert c.padded_shape[1] % c.word_elements == 0 and c.padded_shape[1] >= 60
    for p in ports:
        assert p.word_elements == values[f"{p.array}_{'in' if p.direction == 'in' else 'out'}_pack_l3"]
        assert p.c_type == "float" and p.bundle == f"gmem_{p.array}" and p.word_type == f"{p.array}_word"


def test_reloaded_partial_results_make_the_output_inout():
    descriptor, values = _descriptor("mm.c", "i-j__i-k.j", {"I": "16", "J": "16", "K": "16"},
                                     {"i_t1": 8, "j_t1": 8, "k_t1": 8, "i_t2": 2, "j_t2": 2, "k_t2": 2})
    assert kernel_interface(descriptor, values).port("C").direction == "inout"


def test_overlapping_footprints_span_both_loops():
    descriptor, values = _descriptor("cnn.c", "o__o-h-w.i-p-q", {"O": "8", "I": "8", "H": "10", "W": "9", "P": "3", "Q": "3"},
                                     {"o_t1": 4, "h_t1": 4, "w_t1": 5, "i_t1": 8, "p_t1": 3, "q_t1": 3,
                                      "o_t2": 2, "h_t2": 1, "w_t2": 1, "i_t2": 2})
    interface = kernel_interface(descriptor, values)
    for port in interface.ports:
        for stored, dim in enumerate(port.layout):
            assert port.padded_shape[stored] >= port.shape[dim]
        assert port.padded_shape[-1] % port.word_elements == 0
