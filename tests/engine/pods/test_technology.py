import json

import pytest

from engine.pods.technology import DEFAULT_TECHNOLOGY, TechnologyError, load_technology


def test_default_is_sosa_28nm():
    t = load_technology()
    assert (t.mac_pj, t.sram_pj_per_byte, t.clock_hz, t.tdp_w) == (0.4, 2.7, 1e9, 400.0)
    assert t.interconnect_mw_per_byte["butterfly-2"] == 0.52
    assert t.interconnect_pj_per_byte_at_reference("crossbar") == pytest.approx(7.36)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.pop("mac_pj"), "missing figure 'mac_pj'"),
    (lambda d: d.update(sram_pj_per_byte=-2.7), "'sram_pj_per_byte' must be positive, got -2.7"),
    (lambda d: d.update(clock_hz="fast"), "'clock_hz' must be a positive number"),
    (lambda d: d["interconnect_mw_per_byte"].pop("benes"), "missing figure 'interconnect_mw_per_byte.benes'"),
    (lambda d: d.update(psum_bytes=1.5), "'psum_bytes' must be a whole number"),
])
def test_bad_figures_are_named(tmp_path, edit, message):
    data = json.loads(DEFAULT_TECHNOLOGY.read_text())
    edit(data)
    path = tmp_path / "tech.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TechnologyError) as error:
        load_technology(path)
    assert message in str(error.value) and str(path) in str(error.value)


def test_unreadable_files(tmp_path):
    with pytest.raises(TechnologyError, match="not found"):
        load_technology(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{\n  'x': 1")
    with pytest.raises(TechnologyError, match=r"bad.json:2:\d+: not valid JSON"):
        load_technology(bad)
