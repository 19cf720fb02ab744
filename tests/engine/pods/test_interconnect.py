import pytest

from engine.pods.interconnect import InterconnectError, butterfly_links, make_interconnect


def test_butterfly_path_ends_at_its_destination_and_starts_from_its_source():
    for s in range(16):
        for d in range(16):
            links = butterfly_links(16, s, d)
            assert len(links) == 4
            assert links[-1] == 3 * 16 + d
            # the position after stage 0 keeps the source's low bits
            assert links[0] % 16 & 0b0111 == s & 0b0111


def test_butterfly_1_blocks_what_butterfly_2_routes():
    one = make_interconnect("butterfly-1", 8).router()
    assert one.route(0, 0) == 0
    assert one.route(4, 1) is None          # both need stage 0's link at position 0
    assert one.route(0, 1) == 0             # the same bank multicasts through shared links
    two = make_interconnect("butterfly-2", 8).router()
    assert two.route(0, 0) == 0 and two.route(4, 1) == 1


def test_non_blocking_networks_admit_any_route_set_with_one_source_per_pod():
    for name in ("crossbar", "benes"):
        router = make_interconnect(name, 8).router()
        assert all(router.route(s, (5 * s + 3) % 8) is not None for s in range(8))
        assert router.route(7, 3) is None   # pod 3 already receives from bank 0


def test_pod_counts_the_structure_cannot_build():
    with pytest.raises(InterconnectError, match="butterfly-2 cannot connect 48 pods: a butterfly network needs a power of two"):
        make_interconnect("butterfly-2", 48)
    with pytest.raises(InterconnectError, match="unknown interconnect 'mesh'"):
        make_interconnect("mesh", 8)
    assert make_interconnect("crossbar", 48).ports == 48


def test_latency_and_energy_follow_the_structure(technology):
    bf2, benes, xbar = (make_interconnect(n, 256) for n in ("butterfly-2", "benes", "crossbar"))
    assert bf2.latency_cycles(technology) == 9 and benes.latency_cycles(technology) == 23
    assert xbar.latency_cycles(technology) == 1
    # Table 1's figures at the reference count, scaled by stages (multistage) or ports (crossbar)
    assert bf2.pj_per_byte(technology) == pytest.approx(0.52)
    assert make_interconnect("butterfly-2", 16).pj_per_byte(technology) == pytest.approx(0.52 * 5 / 9)
    assert make_interconnect("crossbar", 64).pj_per_byte(technology) == pytest.approx(7.36 / 4)
    assert bf2.pj_per_byte(technology) < benes.pj_per_byte(technology) < xbar.pj_per_byte(technology)
