"""Device JSON files given with --device: checked against the schema, each problem one line naming it."""
from __future__ import annotations

import json

import pytest

from engine.cli.main import main
from engine.errors import EngineError
from engine.models.device import load_device


@pytest.fixture
def u250(bundled):
    return json.loads((bundled("mm").parent.parent / "devices" / "u250.json").read_text())


def model(bundled, device) -> list[str]:
    return ["model", str(bundled("mm")), "--preset", "small", "--design", "i-j__i-j.k", "--param", "i_t1=8",
            "--param", "j_t1=8", "--param", "k_t1=8", "--param", "i_t2=4", "--param", "j_t2=4", "--param", "k_t2=4",
            "--device", str(device)]


def test_a_valid_copy_loads(u250, tmp_path):
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({**u250, "name": "mine", "extra": {"anything": 1}}))
    device = load_device(str(path))
    assert (device.name, device.part, device.resources["DSP"]) == ("mine", u250["part"], u250["resources"]["DSP"])


@pytest.mark.parametrize("edit, phrase", [
    (lambda d: d.pop("part"), "lacks the field 'part'"),
    (lambda d: d["resources"].pop("DSP"), "lacks the field 'resources.DSP'"),
    (lambda d: d["resources"].update(DSP="many"), "'resources.DSP' is \"many\"; expected a non-negative integer"),
    (lambda d: d.update(usable_ratio=1.5), "'usable_ratio' is 1.5; expected a number in (0, 1]"),
    (lambda d: d.update(clock_mhz=0), "'clock_mhz' is 0; expected a positive number"),
    (lambda d: d.update(memory=7), "lacks the field 'memory.axi_bus_bits_max'"),
    (lambda d: d["memory"].pop("bank_bandwidth_gbytes_per_s"), "lacks the field 'memory.bank_bandwidth_gbytes_per_s'"),
    (lambda d: d["memory"].update(bank_bandwidth_gbytes_per_s=0),
     "'memory.bank_bandwidth_gbytes_per_s' is 0; expected a positive number of GB/s"),
    (lambda d: d["memory"].update(banks=-1), "'memory.banks' is -1; expected a positive integer"),
    (lambda d: d["memory"].update(kind="SRAM"), "'memory.kind' is \"SRAM\"; expected one of DDR4, HBM2"),
    (lambda d: d["memory"].pop("bank_gbytes"), "lacks the field 'memory.bank_gbytes'"),
    (lambda d: d["memory"].pop("axi"), "lacks the field 'memory.axi.max_burst_beats'"),
    (lambda d: d["memory"]["axi"].update(outstanding=0), "'memory.axi.outstanding' is 0; expected an integer in 1..512"),
    (lambda d: d["memory"]["axi"].update(latency_cycles=-64), "'memory.axi.latency_cycles' is -64"),
    (lambda d: d["memory"]["axi"].update(boundary_bytes=1000), "'memory.axi.boundary_bytes' is 1000"),
])
def test_a_field_missing_or_wrong_is_named(u250, tmp_path, edit, phrase):
    edit(u250)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(u250))
    with pytest.raises(EngineError) as info:
        load_device(str(path))
    assert str(path) in str(info.value) and phrase in str(info.value) and "\n" not in str(info.value)


def test_the_cli_prints_the_missing_field_in_one_line(bundled, u250, tmp_path, capsys):
    del u250["part"]
    path = tmp_path / "nopart.json"
    path.write_text(json.dumps(u250))
    assert main(model(bundled, path)) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}: device file lacks the field 'part' (a non-empty string (the FPGA part number))\n"


@pytest.mark.parametrize("content, phrase", [
    (b'{"name": "x",\n  "part": }', ":2:11: not valid JSON: Expecting value"),
    (b"[" * 100_000 + b"]" * 100_000, "the device file nests 100000 levels deep; the limit is 64"),
    (b'{"clock_mhz": Infinity}', "not valid JSON: Infinity is not a JSON number"),
    (b"\xff\xfe binary", "is not UTF-8"),
    (b"[1, 2]", "holds a JSON object, not list"),
])
def test_malformed_files_are_one_line_errors(tmp_path, content, phrase):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(EngineError) as info:
        load_device(str(path))
    assert phrase in str(info.value) and "\n" not in str(info.value)
