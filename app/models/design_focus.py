"""DesignFocus(tree_model, selection): the one (design, configuration) every panel shows. The design
tree's rows (with each design's best known configuration, from searches and stored runs) and the
shared DesignSelection (which the detail, topology, bottleneck, compare, proof and export views
follow) are kept in step here, so that one configuration has one source:

- a design picked in the tree is shown with the best configuration the tree holds for it (or the
  design's defaults): `pick`;
- a configuration loaded from a plot, the best of a search when it ends, a project's or a network
  layer's selection after a compile: `load`, `select_best`, `show_space` with a `pending` one;
- a search's ticks, finished designs and end, and a stored run replayed, fill the tree's bests and
  statuses (`follow_search`); the model pool's progress reaches the selection and the tree
  (`follow_models`).

The tree view follows the selection by itself (QtDesignTree.follow). Problems are reported through
`messageShown`, never raised."""
from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from app.models.design_selection import DesignSelection
from app.models.design_tree_model import DesignTreeModel
from engine.errors import EngineError

if TYPE_CHECKING:  # numpy (the search session) and the compiler: not imported before the window paints
    from app.models.search_session import SearchSession
    from app.workers.model_pool import KernelSource, ModelPool
    from engine.compiler.design_space import DesignSpace


class DesignFocus(QObject):
    messageShown = Signal(str)

    def __init__(self, tree_model: DesignTreeModel, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.tree_model, self.selection = tree_model, selection
        self.search: SearchSession | None = None
        self.pending: tuple[str, dict] | None = None  # (design, values) to show after the next compile

    def pick(self, design_id: str) -> None:
        """A design picked in the tree: shown with its best known configuration (unless already shown)."""
        if self.selection.design is not None and self.selection.design.id == design_id:
            return
        best = self.tree_model.best.get(design_id)
        try:
            self.selection.select(design_id, best.params if best else None)
        except EngineError as exc:
            self.messageShown.emit(str(exc))

    def load(self, design_id: str, values: dict) -> None:
        """A configuration (picked in a plot, a search's best): shown in every view."""
        if design_id not in self.tree_model.design_ids():
            self.messageShown.emit(f"{design_id} is not a design of the kernel compiled now")
            return
        self.selection.select(design_id, values)

    def select_best(self) -> None:
        """The design of the highest throughput found, with that configuration, in every panel."""
        best = self.tree_model.best_design()
        if best:
            self.load(best, self.tree_model.best[best].params)

    def show_space(self, space: DesignSpace, device: str, source: KernelSource) -> None:
        """A compile succeeded: the tree and the selection take its designs, unless it compiled the
        source shown already (then the selection and its results stay); `pending` is shown then."""
        pending, self.pending = self.pending, None
        fresh = not (self.selection.source == source and self.tree_model.design_ids())
        if fresh:
            self.tree_model.set_space(space)
            self.selection.set_space(space, device, source)
            self.show_stored_run()
        if pending and pending[0] in self.tree_model.design_ids():
            self.selection.select(*pending)
        elif fresh and space.designs:
            self.pick(space.designs[0].id)

    # -- the search and the model pool -------------------------------------------------------
    def follow_search(self, search: SearchSession) -> None:
        self.search = search
        search.ticked.connect(self._search_ticked)
        search.designFinished.connect(self._design_finished)
        search.stateChanged.connect(self._search_state)

    def follow_models(self, models: ModelPool) -> None:
        self.selection.model_pending = lambda design: design in models.pending
        models.modelReady.connect(self.selection.model_ready)
        models.modelFailed.connect(lambda design, _why: self.selection.model_ready(design))
        models.modelFailed.connect(lambda design, why: self.tree_model.set_status(design, f"no model: {why}"))

    def queue(self, designs) -> None:
        """A search is about to start on these designs."""
        for design in designs:
            self.tree_model.set_status(design, "queued")

    def _search_ticked(self, snapshots: list) -> None:
        for p in snapshots:
            if self.tree_model.status.get(p.design) == "queued":  # ticks may trail the design's end
                self.tree_model.set_status(p.design, "searching")
            self.tree_model.set_best(p.design, p.best)

    def _design_finished(self, result) -> None:
        self.tree_model.set_best(result.design, result.best)
        state = "stopped" if result.stopped == "cancelled" else "done"
        self.tree_model.set_status(result.design, f"{state}, {result.samples:,} samples"
                                   if result.best else f"{state}, nothing fits")

    def _search_state(self) -> None:
        s = self.search
        if s.running:
            return
        for design, status in list(self.tree_model.status.items()):
            if status in ("queued", "searching"):
                self.tree_model.set_status(design, "stopped" if s.status == "interrupted" else "not searched")
        if s.status == "replayed":
            self.show_stored_run()
        elif s.status in ("finished", "interrupted"):  # the search just run: its winner in every panel
            self.select_best()

    def show_stored_run(self) -> None:
        """A reopened run's bests in the tree (again after a compile that rebuilt the tree)."""
        s = self.search
        if s is not None and s.status == "replayed" and s.result is not None:
            for d in s.result.designs:
                self.tree_model.set_best(d.design, d.best)
                self.tree_model.set_status(d.design, f"stored, {d.samples:,} samples")
