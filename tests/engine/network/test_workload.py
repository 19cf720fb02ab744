"""Workload files: Odyssey's JSON and the CSV, the bundled networks, and every bad input as one line."""
from __future__ import annotations

import pytest

from engine.compiler.frontend import parse_kernel
from engine.network.workload import WorkloadError, check_against_kernel, load_network, parse_csv, parse_json
from engine.resources import KERNELS

ODYSSEY = '''{"workloads": [
  {"name": "conv1-1", "tags": ["conv"], "params": {"i": 3, "o": 64, "r": 224, "c": 224, "p": 3, "q": 3}},
  {"name": "conv1-2", "tags": ["conv"], "params": {"i": 64, "o": 64, "r": 224, "c": 224, "p": 3, "q": 3}}
]}'''


def test_odyssey_json_maps_r_c_to_h_w_and_keys_to_define_names(tmp_path):
    path = tmp_path / "net.json"
    path.write_text(ODYSSEY)
    network = load_network(path)
    assert network.name == "net"
    assert [layer.name for layer in network.layers] == ["conv1-1", "conv1-2"]
    assert network.layers[0].sizes == {"I": 3, "O": 64, "H": 224, "W": 224, "P": 3, "Q": 3}
    assert network.layers[1].tags == ("conv",)
    assert network.layers[1].line == 3


def test_csv_reads_the_same_network():
    network = parse_csv("name,tags,i,o,r,c,p,q\nconv1-1,conv,3,64,224,224,3,3\n"
                        "# a comment\nconv1-2,conv;big,64,64,224,224,3,3\n", "net.csv")
    assert network.layers == parse_json(ODYSSEY, "net.json").layers[:1] + (network.layers[1],)
    assert network.layers[1].tags == ("conv", "big")
    assert network.layers[1].sizes["I"] == 64


def test_bundled_networks_have_the_published_layers():
    vgg = load_network("vgg16")
    assert len(vgg.layers) == 13
    macs = sum(l.sizes["O"] * l.sizes["I"] * l.sizes["H"] * l.sizes["W"] * l.sizes["P"] * l.sizes["Q"]
               for l in vgg.layers)
    assert macs == 15_346_630_656  # VGG16's 15.3 GMACs of CONV layers
    resnet = load_network("resnet50")
    assert len(resnet.layers) == 53
    assert resnet.layers[0].sizes == {"I": 3, "O": 64, "H": 112, "W": 112, "P": 7, "Q": 7}


def test_the_cnn_kernel_accepts_them_and_mm_does_not():
    network = parse_json(ODYSSEY, "net.json")
    check_against_kernel(network, parse_kernel(KERNELS / "cnn.c"))
    with pytest.raises(WorkloadError, match=r"net.json:2: layer conv1-1: no size for J, K"):
        check_against_kernel(network, parse_kernel(KERNELS / "mm.c"))


@pytest.mark.parametrize("text, message", [
    ('{"workloads": [', r"^n.json:1:\d+: not valid JSON"),
    ('[]', r'expected an object with a "workloads" list'),
    ('{"workloads": []}', "the workload has no layers"),
    ('{"workloads": [{"name": "a", "params": {"i": 0}}]}', r"^n.json:1: layer a: size i = 0, sizes must be at least 1"),
    ('{"workloads": [{"name": "a", "params": {"i": -3}}]}', "layer a: size i = -3 is not a positive integer"),
    ('{"workloads": [{"name": "a", "params": {"i": 2.5}}]}', "layer a: size i = 2.5 is not a positive integer"),
    ('{"workloads": [{"name": "a"}]}', 'layer a: "params" must be an object'),
    ('{"workloads": [{"name": "a", "params": {"i": 1}}, {"name": "a", "params": {"i": 1}}]}', "layer a appears twice"),
])
def test_bad_json_is_one_line_naming_the_place(text, message):
    with pytest.raises(WorkloadError, match=message) as error:
        parse_json(text, "n.json")
    assert "\n" not in str(error.value)


def test_bad_csv_rows():
    with pytest.raises(WorkloadError, match=r"^n.csv:2: 3 fields, the header has 2"):
        parse_csv("name,i\na,1,2\n", "n.csv")
    with pytest.raises(WorkloadError, match="header must start with `name`"):
        parse_csv("i,o\n1,2\n", "n.csv")
    with pytest.raises(WorkloadError, match=r"^n.csv:3: layer b: size i = 0"):
        parse_csv("name,i\na,1\nb,0\n", "n.csv")


def test_missing_file(tmp_path):
    with pytest.raises(WorkloadError, match="cannot read workload file"):
        load_network(tmp_path / "none.json")
