import pytest

from engine.network.workload import NETWORKS
from engine.pods.workload import CodeLayer, WorkloadError, load_pod_workload, workload_from_layers


def test_convolution_through_im2col_and_matrix_multiply():
    w = workload_from_layers("n", [CodeLayer("c1", {"i": 3, "o": 64, "r": 112, "c": 112, "p": 7, "q": 7}),
                                   CodeLayer("fc", {"I": 10, "J": 1000, "K": 2048})], batch=2)
    conv, fc = w.gemms
    assert (conv.rows, conv.depth, conv.cols, conv.halo_rows) == (112 * 112 * 2, 3 * 49, 64, 3 * 112 + 3)
    assert (fc.rows, fc.depth, fc.cols) == (20, 2048, 1000)
    assert conv.inputs == () and fc.inputs == ("c1",)
    assert w.macs == conv.rows * conv.depth * conv.cols + 20 * 2048 * 1000


def test_attention_tags():
    layers = [CodeLayer("q", {"i": 100, "j": 768, "k": 768}, ("input",)),
              CodeLayer("k", {"i": 100, "j": 768, "k": 768}, ("input",)),
              CodeLayer("s", {"i": 100, "j": 100, "k": 64}, ("heads:2", "from:q", "weights-from:k")),
              CodeLayer("ctx", {"i": 100, "j": 64, "k": 100}, ("heads:2", "weights-from:k")),
              CodeLayer("out", {"i": 100, "j": 768, "k": 768})]
    gemms = {g.name: g for g in workload_from_layers("t", layers).gemms}
    assert gemms["k"].inputs == ()
    assert gemms["s#h1"].inputs == ("q",) and gemms["s#h1"].weights_from == ("k",)
    assert gemms["ctx#h1"].inputs == ("s#h1",)          # a head reads its own head
    assert gemms["out"].inputs == ("ctx#h0", "ctx#h1")  # and a one-head layer reads them all


@pytest.mark.parametrize("layers, message", [
    ([CodeLayer("a", {"x": 3})], "neither a convolution"),
    ([CodeLayer("a", {"i": 3, "j": 0, "k": 1})], "size j=0 must be a positive"),
    ([CodeLayer("a", {"i": 3, "j": 2, "k": 1}, ("from:zz",))], "reads 'zz', which is not an earlier layer"),
    ([CodeLayer("a", {"i": 3, "j": 2, "k": 1}, ("heads:x",))], "tag 'heads:x' needs a positive whole number"),
])
def test_bad_layers(layers, message):
    with pytest.raises(WorkloadError, match=message):
        workload_from_layers("bad", layers)


def test_bundled_bert_base():
    assert (NETWORKS / "bert_base.json").is_file()
    bert = load_pod_workload("bert_base")
    assert len(bert.gemms) == 12 * (6 + 2 * 12)
    # 12 layers x (4 x 768^2 + 2 x 768 x 3072) x 100 tokens + attention 12 heads x 2 x 100 x 100 x 64
    assert bert.macs == 12 * 100 * (4 * 768 * 768 + 2 * 768 * 3072) + 12 * 12 * 2 * 100 * 100 * 64


def test_bundled_densenet121_concatenates_its_blocks():
    dense = load_pod_workload("densenet121")
    assert len(dense.gemms) == 1 + 2 * (6 + 12 + 24 + 16) + 3  # stem, two convolutions a layer, transitions
    by_name = {g.name: g for g in dense.gemms}
    # a layer's 1x1 reads its block's input and every earlier 3x3 of the block: 64 + 5 x 32 channels
    assert by_name["block1-6-1x1"].depth == 64 + 5 * 32
    assert set(by_name["block1-6-1x1"].inputs) == {"conv1", *(f"block1-{l}-3x3" for l in range(1, 6))}
    assert by_name["block1-6-3x3"].cols == 32 and by_name["block1-6-3x3"].depth == 128 * 9
    assert by_name["transition3"].depth == 1024 and by_name["transition3"].cols == 512
    assert by_name["block4-16-3x3"].rows == 9 * 9
