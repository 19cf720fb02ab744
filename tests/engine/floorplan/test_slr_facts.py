"""The device file's SLR section: the U250's facts load, and a file whose SLRs lack a field, give a
non-positive one, add up to more than the device or misplace a bank is refused in one line."""
from __future__ import annotations

import json

import pytest

from engine.errors import EngineError
from engine.models.device import RESOURCE_NAMES, load_device


@pytest.fixture
def u250(bundled):
    return json.loads((bundled("mm").parent.parent / "devices" / "u250.json").read_text())


def test_the_u250_has_four_slrs_within_the_device_with_a_bank_each():
    device = load_device("u250")
    assert len(device.slrs) == 4 and device.sll_per_boundary > 0
    for r in RESOURCE_NAMES:
        assert sum(s.resources[r] for s in device.slrs) <= device.resources[r]
    assert [device.slr_of_bank(b) for b in range(4)] == [0, 1, 2, 3]
    # UG1120's U250 table: four alike SLRs (the shell takes about the same from each, unlike the U200's
    # middle SLR), whose DSP add up to the data sheet's 11,508 for the kernel
    assert sum(s.resources["DSP"] for s in device.slrs) == 11508
    for r in RESOURCE_NAMES:
        amounts = [s.resources[r] for s in device.slrs]
        assert min(amounts) >= 0.99 * max(amounts), r
    assert device.clock_mhz <= device.clock_mhz_max


@pytest.mark.parametrize("edit, phrase", [
    (lambda d: d["slrs"]["dies"][1]["resources"].pop("LUT"), "lacks the field 'slrs.dies[1].resources.LUT'"),
    (lambda d: d["slrs"]["dies"][2]["resources"].update(DSP=0),
     "'slrs.dies[2].resources.DSP' is 0; expected a positive"),
    (lambda d: d["slrs"]["dies"][0]["resources"].update(DSP=-5), "'slrs.dies[0].resources.DSP' is -5"),
    (lambda d: d["slrs"]["dies"][0]["resources"].update(DSP=9000), "the SLRs' DSP add up to 17631, more than"),
    (lambda d: d["slrs"].pop("sll_per_boundary"), "lacks the field 'slrs.sll_per_boundary'"),
    (lambda d: d["slrs"].update(sll_per_boundary=0), "'slrs.sll_per_boundary' is 0"),
    (lambda d: d["slrs"].update(dies=[]), "'slrs.dies' is []"),
    (lambda d: d["slrs"]["dies"][3].update(banks=[2]), "lists banks [0, 1, 2, 2]"),
    (lambda d: d.pop("clock_mhz_max"), "lacks the field 'clock_mhz_max'"),
    (lambda d: d.update(clock_mhz_max=-1), "'clock_mhz_max' is -1"),
    (lambda d: d.update(clock_mhz=600), "'clock_mhz' is 600, above 'clock_mhz_max' 500"),
])
def test_a_bad_slr_section_is_refused_in_one_line(u250, tmp_path, edit, phrase):
    edit(u250)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(u250))
    with pytest.raises(EngineError) as info:
        load_device(str(path))
    assert str(path) in str(info.value) and phrase in str(info.value) and "\n" not in str(info.value)
