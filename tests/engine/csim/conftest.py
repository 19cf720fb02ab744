"""Work the C-simulation test modules share, done once per session: each case of csim_cases exported
and simulated once (test_csim_designs checks every case, test_csim_reload checks the reload designs
among them, the same exports), and one cache folder for the timed C simulation's builds (the trace
recorder object is compiled once, not once per module)."""
from __future__ import annotations

from pathlib import Path

import pytest
from csim_cases import Case, simulate_all

from engine.csim import CsimResult


class Simulated:
    """cases -> {case id: CsimResult or the exception}, each case simulated at most once a session."""

    def __init__(self, root: Path):
        self.root = root
        self._done: dict[str, CsimResult | Exception] = {}

    def __call__(self, cases) -> dict[str, CsimResult | Exception]:
        missing = list({c.id: c for c in cases if c.id not in self._done}.values())
        if missing:
            self._done.update(simulate_all(missing, self.root))
        return {c.id: self._done[c.id] for c in cases}

    @staticmethod
    def selected(request) -> list[Case]:
        """The `case` parameters of the requesting module's tests that this session runs (after -m
        and -k): a module fixture simulates those, not the slow cases it deselected."""
        module = request.node.getparent(pytest.Module)
        chosen = []
        for item in request.session.items:
            params = getattr(getattr(item, "callspec", None), "params", {})
            if item.getparent(pytest.Module) is module and "case" in params:
                chosen.append(params["case"])
        return chosen

    def project(self, case: Case) -> Path:
        """The export the simulation ran on; the export's error when there is none."""
        result = self([case])[case.id]
        folder = self.root / case.id.replace(".", "_")
        if not (folder / "design.json").is_file() and isinstance(result, Exception):
            raise result
        return folder


@pytest.fixture(scope="session")
def simulated(tmp_path_factory) -> Simulated:
    return Simulated(tmp_path_factory.mktemp("csim"))


@pytest.fixture(scope="session")
def timed_cache(tmp_path_factory) -> Path:
    """The build cache of every timed C simulation of the csim tests (builds are keyed by content)."""
    return tmp_path_factory.mktemp("timed-cache")
