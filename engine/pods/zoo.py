"""SOSA's benchmark networks (section 5) written from their published architectures as network files.

SOSA evaluates seven CNNs at 299x299x3 (Keras' pre-trained Inception-v3, ResNet50/101/152,
DenseNet121/169/201) and three BERTs at sequence length 100 (BERT-medium, -base, -large), batch 1.
This module writes each as Odyssey's workload JSON (`resources/networks/NAME.json`) with the
multi-pod tags of `engine/pods/workload.py` (`input`, `from:NAME`, `weights-from:NAME`, `heads:H`),
so the scheduler sees the same dependences the networks have:

- ResNet (He et al. 2016; Keras' layout: stride 2 on the first 1x1 of stages 3-5 and on the
  projection): a block's first 1x1 and its projection read the previous block's output (its last
  1x1 and its shortcut); the residual addition runs on the post-processor.
- DenseNet (Huang et al. 2017, growth 32, bottleneck 128): a layer's 1x1 reads its block's input and
  every earlier 3x3 of the block; a transition's 1x1 halves the channels at the block's size and its
  2x2 average pool (on the post-processor) halves the size for the next block, as in Keras.
- Inception-v3 (Szegedy et al. 2016, Keras' `inception_v3`): each mixed block's branches read the
  block input; the next block reads the concatenation (the last convolution of every branch, and
  the block input itself where a branch is a max pool).
- BERT (Devlin et al. 2019; the smaller sizes of Turc et al. 2019, "Well-read students learn
  better": BERT-medium is L=8, H=512, A=8; BERT-large L=24, H=1024, A=16; feed-forward 4H; heads of
  64): every GEMM of an encoder layer with i = tokens.

Sizes follow the Keras models at 299x299 (stem 7x7/2 with padding 3 -> 150, max pool -> 75, then
each stride-2 stage floor((n - 1) / 2) + 1 for ResNet, n // 2 for DenseNet's average pools; Inception's
valid convolutions 149, 147, 73, 71, 35, 17, 8). r/c are each layer's output rows/columns (a
stride-2 layer is the stride-1 convolution with the same MACs). Classifiers are left out.

`python -m engine.pods.zoo [DIR]` rewrites the files (default resources/networks); the test suite
checks the committed files are this module's output.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from engine.network.workload import NETWORKS

SOSA_IMAGE = 299
SOSA_SEQUENCE = 100


def _conv(name, i, o, size, p=1, q=None, tags=()):
    q = p if q is None else q
    return {"name": name, "tags": ["conv", *tags], "params": {"i": i, "o": o, "r": size, "c": size, "p": p, "q": q}}


def _from(*names):
    return [f"from:{n}" for n in names]


# --- BERT ------------------------------------------------------------------------------------------

BERTS = {  # name: (encoder layers, hidden, heads); heads are 64 wide, the feed-forward 4 x hidden
    "bert_medium": (8, 512, 8, "Turc et al. 2019 (Google's 24 smaller BERTs), BERT-medium"),
    "bert_base": (12, 768, 12, "Devlin et al. 2019, BERT-base"),
    "bert_large": (24, 1024, 16, "Devlin et al. 2019, BERT-large"),
}


def bert(name: str, seq: int = SOSA_SEQUENCE) -> dict:
    layers, hidden, heads, cite = BERTS[name]
    ffn, head = 4 * hidden, hidden // heads
    out = []
    previous = None
    for n in range(1, layers + 1):
        p = f"enc{n}-"
        reads = ["input"] if previous is None else _from(previous)
        for part in ("q", "k", "v"):
            out.append({"name": p + part, "tags": ["mm", *reads], "params": {"i": seq, "j": hidden, "k": hidden}})
        out.append({"name": p + "scores", "tags": ["mm", f"heads:{heads}", f"from:{p}q", f"weights-from:{p}k"],
                    "params": {"i": seq, "j": seq, "k": head}})
        out.append({"name": p + "context", "tags": ["mm", f"heads:{heads}", f"from:{p}scores", f"weights-from:{p}v"],
                    "params": {"i": seq, "j": head, "k": seq}})
        out.append({"name": p + "out", "tags": ["mm"], "params": {"i": seq, "j": hidden, "k": hidden}})
        out.append({"name": p + "ffn1", "tags": ["mm"], "params": {"i": seq, "j": ffn, "k": hidden}})
        out.append({"name": p + "ffn2", "tags": ["mm"], "params": {"i": seq, "j": hidden, "k": ffn}})
        previous = p + "ffn2"
    source = (f"{cite} ({layers} encoder layers, hidden {hidden}, {heads} heads of {head}, feed-forward {ffn}) "
              f"at sequence length {seq}, SOSA's median (section 5): every GEMM of an encoder layer as a matrix "
              "multiply C[i][j] += A[i][k] B[k][j] (Odyssey's MM keys, i = tokens). Tags for the multi-pod "
              "scheduler (engine/pods/workload.py): 'input' reads the embeddings, 'from:NAME' names the layer "
              "whose output is A, 'weights-from:NAME' the layer whose output is B (attention's K^T and V), "
              f"'heads:{heads}' {heads} independent GEMMs of these sizes. Softmax, layer norm and residual "
              "additions run on the post-processor and are not GEMMs. Written by engine/pods/zoo.py.")
    return {"name": name, "source": source, "workloads": out}


# --- ResNet ----------------------------------------------------------------------------------------

RESNETS = {"resnet50_299": (3, 4, 6, 3), "resnet101": (3, 4, 23, 3), "resnet152": (3, 8, 36, 3)}


def _resnet_sizes(image: int) -> list[int]:
    stem = (image + 6 - 7) // 2 + 1
    size = (stem + 2 - 3) // 2 + 1
    sizes = [size]
    for _ in range(3):
        size = (size - 1) // 2 + 1
        sizes.append(size)
    return [stem, *sizes]


def resnet(name: str, image: int = SOSA_IMAGE) -> dict:
    blocks = RESNETS[name]
    stem, *sizes = _resnet_sizes(image)
    out = [_conv("conv1", 3, 64, stem, 7, tags=["input"])]
    block_out = ["conv1"]  # the layers whose outputs (summed) are the current block input
    channels = 64
    for stage, (count, size) in enumerate(zip(blocks, sizes), start=2):
        width = 64 * 2 ** (stage - 2)
        for b in range(1, count + 1):
            p = f"res{stage}-{b}-"
            reads = _from(*block_out)
            out.append(_conv(p + "1x1a", channels, width, size, tags=reads))
            out.append(_conv(p + "3x3", width, width, size, 3, tags=_from(p + "1x1a")))
            out.append(_conv(p + "1x1b", width, 4 * width, size, tags=_from(p + "3x3")))
            if b == 1:
                out.append(_conv(p + "proj", channels, 4 * width, size, tags=reads))
                block_out = [p + "1x1b", p + "proj"]
            else:
                block_out = [p + "1x1b", *block_out[1:]]
            channels = 4 * width
    depth = 2 + 3 * sum(blocks)
    source = (f"He et al. 2016, ResNet-{depth} (bottleneck blocks {', '.join(map(str, blocks))}; Keras' layout: "
              "stride 2 on the first 1x1 of stages 3-5 and on their projection shortcuts) at SOSA's input size "
              f"{image}x{image} (stem 7x7/2 -> {stem}, max pool -> {sizes[0]}; then {', '.join(map(str, sizes[1:]))}). "
              "r/c are output rows/columns with strides folded in. A block's first 1x1 and its projection read "
              "the previous block's output: its last 1x1 and the shortcut ('from:' tags, engine/pods/workload.py); "
              "the residual addition and pooling run on the post-processor; the classifier is left out. "
              "Written by engine/pods/zoo.py.")
    return {"name": name, "source": source, "workloads": out}


# --- DenseNet --------------------------------------------------------------------------------------

DENSENETS = {"densenet121": (6, 12, 24, 16), "densenet169": (6, 12, 32, 32), "densenet201": (6, 12, 48, 32)}


def densenet(name: str, image: int = SOSA_IMAGE) -> dict:
    blocks = DENSENETS[name]
    stem = (image + 6 - 7) // 2 + 1
    size = (stem + 2 - 3) // 2 + 1
    out = [_conv("conv1", 3, 64, stem, 7, tags=["input"])]
    block_in, channels, sizes = ["conv1"], 64, [stem]
    for n, count in enumerate(blocks, start=1):
        sizes.append(size)
        grown = []
        for layer in range(1, count + 1):
            p = f"block{n}-{layer}-"
            out.append(_conv(p + "1x1", channels + 32 * (layer - 1), 128, size, tags=_from(*block_in, *grown)))
            out.append(_conv(p + "3x3", 128, 32, size, 3, tags=_from(p + "1x1")))
            grown.append(p + "3x3")
        channels += 32 * count
        if n < len(blocks):  # Keras: the 1x1 at the block's size, then the 2x2 average pool
            out.append(_conv(f"transition{n}", channels, channels // 2, size, tags=_from(*block_in, *grown)))
            block_in, channels, size = [f"transition{n}"], channels // 2, size // 2
    source = (f"Huang et al. 2017, DenseNet-{2 * sum(blocks) + 5} (growth rate 32; dense blocks of "
              f"{', '.join(map(str, blocks))} layers, each a 1x1 convolution to 128 channels then a 3x3 to 32; "
              "transitions a 1x1 convolution halving the channels at the block's size, then a 2x2 average pool "
              f"on the post-processor) at SOSA's input size {image}x{image} (stem 7x7 stride 2 -> {stem}x{stem}, max pool -> "
              f"{sizes[1]}x{sizes[1]}; then {', '.join(map(str, sizes[2:]))}). r/c are output rows/columns with "
              "strides folded in. A layer reads the concatenation of its block's input and every earlier layer "
              "of the block: 'from:NAME' tags (engine/pods/workload.py); the classifier is left out. Pooling runs "
              "on the post-processor. Written by engine/pods/zoo.py.")
    return {"name": name, "source": source, "workloads": out}


# --- Inception-v3 ----------------------------------------------------------------------------------

def inception_v3(name: str = "inception_v3") -> dict:
    """Keras' inception_v3 at 299x299 (its padding: 'valid' where it says so, else 'same')."""
    out = []

    def conv(n, i, o, size, p=1, q=None, reads=()):
        out.append(_conv(n, i, o, size, p, q, tags=list(reads) if reads else []))
        return n

    x = conv("conv1", 3, 32, 149, 3, reads=["input"])           # 3x3/2 valid: 299 -> 149
    x = conv("conv2", 32, 32, 147, 3, reads=_from(x))           # valid: 147
    x = conv("conv3", 32, 64, 147, 3, reads=_from(x))           # same
    x = conv("conv4", 64, 80, 73, 1, reads=_from(x))            # after max pool 3x3/2: 73
    x = conv("conv5", 80, 192, 71, 3, reads=_from(x))           # valid: 71; max pool -> 35
    block, channels = [x], 192
    for m, pool in enumerate((32, 64, 64)):                     # mixed0-2: 35x35
        p, r = f"mixed{m}-", _from(*block)
        b1 = conv(p + "1x1", channels, 64, 35, reads=r)
        b5 = conv(p + "5x5", 48, 64, 35, 5, reads=_from(conv(p + "5x5-1x1", channels, 48, 35, reads=r)))
        d = conv(p + "3x3dbl-1x1", channels, 64, 35, reads=r)
        d = conv(p + "3x3dbl-a", 64, 96, 35, 3, reads=_from(d))
        d = conv(p + "3x3dbl-b", 96, 96, 35, 3, reads=_from(d))
        bp = conv(p + "pool", channels, pool, 35, reads=r)
        block, channels = [b1, b5, d, bp], 64 + 64 + 96 + pool
    p, r = "mixed3-", _from(*block)                             # mixed3: 35 -> 17
    b3 = conv(p + "3x3", channels, 384, 17, 3, reads=r)
    d = conv(p + "3x3dbl-1x1", channels, 64, 35, reads=r)
    d = conv(p + "3x3dbl-a", 64, 96, 35, 3, reads=_from(d))
    d = conv(p + "3x3dbl-b", 96, 96, 17, 3, reads=_from(d))
    block, channels = [b3, d, *block], 384 + 96 + channels      # the max-pool branch is the block input
    for m, c7 in ((4, 128), (5, 160), (6, 160), (7, 192)):     # mixed4-7: 17x17, 768 channels
        p, r = f"mixed{m}-", _from(*block)
        b1 = conv(p + "1x1", channels, 192, 17, reads=r)
        s = conv(p + "7x7-1x1", channels, c7, 17, reads=r)
        s = conv(p + "7x7-a", c7, c7, 17, 1, 7, reads=_from(s))
        s = conv(p + "7x7-b", c7, 192, 17, 7, 1, reads=_from(s))
        d = conv(p + "7x7dbl-1x1", channels, c7, 17, reads=r)
        d = conv(p + "7x7dbl-a", c7, c7, 17, 7, 1, reads=_from(d))
        d = conv(p + "7x7dbl-b", c7, c7, 17, 1, 7, reads=_from(d))
        d = conv(p + "7x7dbl-c", c7, c7, 17, 7, 1, reads=_from(d))
        d = conv(p + "7x7dbl-d", c7, 192, 17, 1, 7, reads=_from(d))
        bp = conv(p + "pool", channels, 192, 17, reads=r)
        block, channels = [b1, s, d, bp], 4 * 192
    p, r = "mixed8-", _from(*block)                             # mixed8: 17 -> 8
    b3 = conv(p + "3x3", 192, 320, 8, 3, reads=_from(conv(p + "3x3-1x1", channels, 192, 17, reads=r)))
    s = conv(p + "7x7x3-1x1", channels, 192, 17, reads=r)
    s = conv(p + "7x7x3-a", 192, 192, 17, 1, 7, reads=_from(s))
    s = conv(p + "7x7x3-b", 192, 192, 17, 7, 1, reads=_from(s))
    s = conv(p + "7x7x3-c", 192, 192, 8, 3, reads=_from(s))
    block, channels = [b3, s, *block], 320 + 192 + channels
    for m in (9, 10):                                           # mixed9-10: 8x8, 2048 channels
        p, r = f"mixed{m}-", _from(*block)
        b1 = conv(p + "1x1", channels, 320, 8, reads=r)
        t = conv(p + "3x3-1x1", channels, 384, 8, reads=r)
        ta = conv(p + "3x3-a", 384, 384, 8, 1, 3, reads=_from(t))
        tb = conv(p + "3x3-b", 384, 384, 8, 3, 1, reads=_from(t))
        d = conv(p + "3x3dbl-1x1", channels, 448, 8, reads=r)
        d = conv(p + "3x3dbl-3x3", 448, 384, 8, 3, reads=_from(d))
        da = conv(p + "3x3dbl-a", 384, 384, 8, 1, 3, reads=_from(d))
        db = conv(p + "3x3dbl-b", 384, 384, 8, 3, 1, reads=_from(d))
        bp = conv(p + "pool", channels, 192, 8, reads=r)
        block, channels = [b1, ta, tb, da, db, bp], 320 + 768 + 768 + 192
    source = ("Szegedy et al. 2016, Inception-v3 as Keras' inception_v3 at SOSA's input size 299x299 (stem "
              "149, 147, 147, max pool 73, 71, max pool 35; mixed0-2 at 35x35, mixed3 -> 17x17, mixed4-7, mixed8 "
              "-> 8x8, mixed9-10; 1x7/7x1 and 1x3/3x1 factorised convolutions as p x q). r/c are output rows/"
              "columns with strides folded in. Each branch reads its block's input, the next block reads the "
              "concatenation: the last convolution of every branch and, where a branch is a max pool (mixed3, "
              "mixed8), the block input ('from:' tags, engine/pods/workload.py). Average pools before the pool "
              "branches' 1x1 run on the post-processor; the classifier is left out. Written by engine/pods/zoo.py.")
    return {"name": name, "source": source, "workloads": out}


# --- the set ---------------------------------------------------------------------------------------

def _builders():
    out = {name: (lambda n=name: resnet(n)) for name in RESNETS}
    out.update({name: (lambda n=name: densenet(n)) for name in DENSENETS})
    out["inception_v3"] = inception_v3
    out.update({name: (lambda n=name: bert(n)) for name in BERTS})
    return out


BUILDERS = _builders()
# SOSA section 5's ten benchmarks, under their bundled names
SOSA_BENCHMARKS = ("inception_v3", "resnet50_299", "resnet101", "resnet152", "densenet121", "densenet169",
                   "densenet201", "bert_medium", "bert_base", "bert_large")
# SOSA section 6.1's multi-tenancy pair (Fig. 11): run together at batch 1, 1.44x over one after the other
SOSA_TENANTS = ("resnet152", "bert_medium")


def network_json(name: str) -> str:
    """The file text of a bundled network (one layer a line, like the hand-written files)."""
    data = BUILDERS[name]()
    lines = [json.dumps(layer) for layer in data["workloads"]]
    return ("{\n" f'  "name": {json.dumps(data["name"])},\n  "source": {json.dumps(data["source"])},\n'
            '  "workloads": [\n    ' + ",\n    ".join(lines) + "\n  ]\n}\n")


def write_all(directory: Path = NETWORKS) -> list[Path]:
    paths = []
    for name in BUILDERS:
        path = Path(directory) / f"{name}.json"
        path.write_text(network_json(name))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all(Path(sys.argv[1]) if len(sys.argv) > 1 else NETWORKS):
        print(written)
