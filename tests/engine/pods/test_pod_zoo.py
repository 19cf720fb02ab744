"""SOSA's benchmark networks (engine/pods/zoo.py): the committed files are the generator's output and
their GEMMs follow the published hyper-parameters."""
import pytest

from engine.network.workload import NETWORKS
from engine.pods.zoo import BUILDERS, SOSA_BENCHMARKS, network_json
from engine.pods.workload import load_pod_workload


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_committed_file_is_the_generators_output(name):
    assert (NETWORKS / f"{name}.json").read_text() == network_json(name), \
        f"resources/networks/{name}.json is stale: run python -m engine.pods.zoo"


def test_sosa_benchmarks_are_bundled():
    assert len(SOSA_BENCHMARKS) == 10 and set(SOSA_BENCHMARKS) <= set(BUILDERS)


@pytest.mark.parametrize("name, layers, hidden, heads", [("bert_medium", 8, 512, 8), ("bert_base", 12, 768, 12),
                                                         ("bert_large", 24, 1024, 16)])
def test_bert_gemms_follow_the_hyper_parameters(name, layers, hidden, heads):
    """Turc et al. / Devlin et al.: L layers, hidden H, H/64 heads of 64, feed-forward 4H; 100 tokens."""
    seq, ffn, head = 100, 4 * hidden, 64
    bert = load_pod_workload(name)
    assert len(bert.gemms) == layers * (6 + 2 * heads)  # q, k, v, out, ffn1, ffn2 + per head scores, context
    g = {x.name: x for x in bert.gemms}
    shape = lambda x: (x.rows, x.depth, x.cols)  # noqa: E731
    for n in (1, layers):
        for part in "qkv":
            assert shape(g[f"enc{n}-{part}"]) == (seq, hidden, hidden)
        assert shape(g[f"enc{n}-scores#h{heads - 1}"]) == (seq, head, seq)
        assert shape(g[f"enc{n}-context#h0"]) == (seq, seq, head)
        assert shape(g[f"enc{n}-out"]) == (seq, hidden, hidden)
        assert shape(g[f"enc{n}-ffn1"]) == (seq, hidden, ffn)
        assert shape(g[f"enc{n}-ffn2"]) == (seq, ffn, hidden)
    assert g["enc1-scores#h3"].inputs == ("enc1-q",) and g["enc1-scores#h3"].weights_from == ("enc1-k",)
    assert g["enc1-context#h3"].inputs == ("enc1-scores#h3",) and g["enc1-context#h3"].weights_from == ("enc1-v",)
    assert g["enc2-q"].inputs == ("enc1-ffn2",) and g["enc1-q"].inputs == ()
    assert bert.macs == layers * seq * (4 * hidden * hidden + 2 * hidden * ffn) + layers * heads * 2 * seq * seq * head


@pytest.mark.parametrize("name, blocks", [("resnet50_299", (3, 4, 6, 3)), ("resnet101", (3, 4, 23, 3)),
                                          ("resnet152", (3, 8, 36, 3))])
def test_resnets_at_299(name, blocks):
    net = load_pod_workload(name)
    assert len(net.gemms) == 1 + 3 * sum(blocks) + 4  # stem, three convolutions a block, four projections
    g = {x.name: x for x in net.gemms}
    assert g["conv1"].rows == 150 * 150 and g["conv1"].depth == 3 * 49
    # Keras at 299: 75, 38, 19, 10 output pixels a side in stages 2-5
    assert [g[f"res{s}-1-3x3"].rows for s in (2, 3, 4, 5)] == [75 * 75, 38 * 38, 19 * 19, 10 * 10]
    last = f"res4-{blocks[2]}-"
    assert (g[last + "3x3"].depth, g[last + "3x3"].cols) == (256 * 9, 256)
    assert (g[last + "1x1b"].depth, g[last + "1x1b"].cols) == (256, 1024)
    # a block reads the previous block's output: its last 1x1 and the shortcut (a projection)
    assert set(g["res3-1-1x1a"].inputs) == {"res2-3-1x1b", "res2-1-proj"}
    assert set(g["res3-2-1x1a"].inputs) == {"res3-1-1x1b", "res3-1-proj"}
    assert set(g["res3-1-proj"].inputs) == set(g["res3-1-1x1a"].inputs) and g["res3-1-proj"].depth == 256


def test_resnet152_macs():
    # the convolutions of ResNet-152 are 11.5 G multiply-adds at 224 (He et al., Table 1, 11.3 GFLOPs
    # counted as multiply-adds); at 299 the pixels grow (150/112)^2 ~ 1.8x
    assert load_pod_workload("resnet152").macs == pytest.approx(20.9e9, rel=0.01)


@pytest.mark.parametrize("name, blocks", [("densenet121", (6, 12, 24, 16)), ("densenet169", (6, 12, 32, 32)),
                                          ("densenet201", (6, 12, 48, 32))])
def test_densenets(name, blocks):
    net = load_pod_workload(name)
    assert len(net.gemms) == 1 + 2 * sum(blocks) + 3
    g = {x.name: x for x in net.gemms}
    # Keras: a transition's 1x1 runs at its block's size, its 2x2 average pool halves the next block's
    assert [g[f"transition{n}"].rows for n in (1, 2, 3)] == [75 * 75, 37 * 37, 18 * 18]
    assert g["block2-1-1x1"].rows == 37 * 37 and g["block4-1-3x3"].rows == 9 * 9
    channels = 64
    for n, count in enumerate(blocks, start=1):
        assert g[f"block{n}-{count}-1x1"].depth == channels + 32 * (count - 1)
        channels += 32 * count
        if n < 4:
            assert (g[f"transition{n}"].depth, g[f"transition{n}"].cols) == (channels, channels // 2)
            channels //= 2


def test_inception_v3_concatenations_and_macs():
    net = load_pod_workload("inception_v3")
    g = {x.name: x for x in net.gemms}
    # the block inputs are the concatenations Keras' inception_v3 builds: 192, 256, 288, 288, 768 (x4), 1280, 2048
    for block, channels in (("mixed0", 192), ("mixed1", 256), ("mixed2", 288), ("mixed3", 288), ("mixed4", 768),
                            ("mixed7", 768), ("mixed8", 768), ("mixed9", 1280), ("mixed10", 2048)):
        first = next(g[f"{block}-{n}"] for n in ("1x1", "3x3dbl-1x1", "3x3-1x1") if f"{block}-{n}" in g)
        assert first.depth == channels, block
    assert g["mixed4-7x7-a"].depth == 128 * 7 and g["mixed4-7x7-a"].rows == 17 * 17
    assert g["mixed3-3x3"].rows == 17 * 17 and g["mixed8-3x3"].rows == 8 * 8
    # mixed3's max-pool branch is its input: mixed4 reads mixed2's branches too
    assert {"mixed3-3x3", "mixed3-3x3dbl-b", "mixed2-pool"} <= set(g["mixed4-1x1"].inputs)
    assert net.macs == pytest.approx(5.71e9, rel=0.01)  # Keras' Inception-v3: ~5.7 G multiply-adds at 299
