"""The bundled technology, loaded once for the pods tests."""
from __future__ import annotations

import pytest

from engine.pods.technology import load_technology


@pytest.fixture(scope="session")
def technology():
    return load_technology()
