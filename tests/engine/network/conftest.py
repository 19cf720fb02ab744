"""Network tests keep built models in the session's temporary folder, never in the user's cache (the
local cluster's worker processes inherit the variable)."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def network_model_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SYSTOLIC_STUDIO_CACHE", str(tmp_path_factory.getbasetemp() / "network-model-cache"))
