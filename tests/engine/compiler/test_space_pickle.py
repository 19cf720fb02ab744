"""A DesignSpace survives pickling (the window's compile process sends it back pickled): dependences
whose maps repeat a dimension name on both sides (`S0[o, h] -> S1[o' = o, ...]`, which islpy's own
pickling refuses) come back equal, with the same text and dimension names."""
from __future__ import annotations

import pickle

import pytest

from engine.compiler.design_space import compile_kernel


@pytest.mark.parametrize("name", ["mm", "cnn", "lu"])
def test_design_space_round_trips_through_pickle(bundled, name):
    space = compile_kernel(bundled(name))
    again = pickle.loads(pickle.dumps(space, protocol=pickle.HIGHEST_PROTOCOL))
    assert [d.id for d in again.designs] == [d.id for d in space.designs]
    assert again.designs == space.designs and again.kernel == space.kernel
    before, after = space.dependences.all(), again.dependences.all()
    assert len(after) == len(before)
    for old, new in zip(before, after):
        assert str(new) == str(old) and (new.kind, new.array, new.source, new.sink) == (
            old.kind, old.array, old.source, old.sink)
        assert new.relation.is_equal(old.relation) and new.relation.get_space() == old.relation.get_space()
