"""DesignFocus(tree_model, selection): the one (design, configuration) every panel shows. The design
tree's rows (with each design's best known configuration, from searches and stored runs) and the
shared DesignSelection (which the detail, topology, bottleneck, compare, proof and export views
follow) are kept in step here, so that one configuration has one source:

- a design picked in the tree is shown with the best configuration the tree holds for it (or the
  design's defaults): `pick`;
- a configuration loaded from a plot or a proof ("Load this configuration"), the best of a search
  when it ends, a project's or a network layer's selection after a compile: `load` (which refuses,
  with the reason, one the kernel compiled now makes illegal, and keeps the selection; a proof's
  configuration becomes the tree's best of its design), `select_best`, `show_space` with a
  `pending` one;
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
        self._adopting: tuple[str, dict] | None = None  # (design, values) the tree takes once evaluated
        selection.changed.connect(self._adopt)

    def pick(self, design_id: str) -> None:
        """A design picked in the tree: shown with its best known configuration (unless already shown)."""
        if self.selection.design is not None and self.selection.design.id == design_id:
            return
        best = self.tree_model.best.get(design_id)
        try:
            self.selection.select(design_id, best.params if best else None)
        except EngineError as exc:
            self.messageShown.emit(str(exc))

    def load(self, design_id: str, values: dict, *, adopt: bool = False) -> str:
        """A configuration (picked in a plot, a search's best, a proof's): shown in every view. One
        that is no longer legal (the kernel changed since it was found) is refused and the selection
        kept: the reason is returned (and shown as a message), "" when loaded. `adopt`: the tree
        also takes it as the design's best once evaluated, if it is better (a proof's find)."""
        why = self.refusal(design_id, values)
        if why:
            self.messageShown.emit(why)
            return why
        self.selection.select(design_id, values)
        if adopt:
            self._adopting = (design_id, {k: int(v) for k, v in self._tunable(design_id, values).items()})
            self._adopt()
        return ""

    def refusal(self, design_id: str, values: dict) -> str:
        """Why this configuration cannot be shown for the kernel compiled now ("" if it can; no
        values at all: the design's defaults)."""
        from engine.models.constraints import violations  # numpy: not before the window paints

        if design_id not in self.tree_model.design_ids() or self.selection.space is None:
            return f"{design_id} is not a design of the kernel compiled now; the selection is unchanged"
        if not values:
            return ""  # the design with its defaults
        design = self.selection.space.design(design_id)
        problems = violations(design, self._tunable(design_id, values))
        if problems:
            return (f"{design_id}: this configuration is not legal for the kernel compiled now "
                    f"({'; '.join(problems)}); the selection is unchanged")
        return ""

    def _tunable(self, design_id: str, values: dict) -> dict:
        """The tuning parameters among `values` (packing factors are inferred, never loaded)."""
        names = {p.name for p in self.selection.space.design(design_id).params if p.tunable}
        return {k: v for k, v in values.items() if k in names}

    def _adopt(self) -> None:
        """The adopted configuration evaluated: the tree's best of its design, if it is better."""
        from engine.search.progress import Candidate  # a dataclass module: cheap, but not before the paint

        if self._adopting is None:
            return
        design_id, values = self._adopting
        s = self.selection
        if s.design is None or s.design.id != design_id or s.values != values:
            if not s.busy:
                self._adopting = None  # another configuration was selected meanwhile
            return
        if s.busy or s.report is None:
            if s.error:
                self._adopting = None
            return
        self._adopting = None
        r = s.report
        if r["fits"]:
            self.tree_model.set_best(design_id, Candidate(dict(values), r["latency_cycles"], r["dsp"],
                                                          r["bram18k"], r["throughput_gops"]))

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

    # -- the views that load configurations ----------------------------------------------------
    def follow_plots(self, plots) -> None:
        """A clicked point (QtResultPlots.pointClicked) is loaded, or refused in place."""
        plots.pointClicked.connect(lambda design, params: plots.show_refusal(self.load(design, params)))

    def follow_bars(self, bars) -> None:
        """A clicked bar of the ranked chart (QtRankedBars): its design's best, from the tree, in every
        panel; the bars are grouped by the compiled designs' dataflows."""
        def load(design: str) -> None:
            best = self.tree_model.best.get(design)
            bars.show_refusal(self.load(design, best.params) if best else f"{design}: no configuration found yet")

        def dataflow(design: str) -> str:
            space = self.selection.space
            ids = self.tree_model.design_ids()
            return str(space.design(design).dataflow) if space is not None and design in ids else ""

        bars.group_of = dataflow
        bars.designClicked.connect(load)

    def follow_proof(self, proof) -> None:
        """The proof's "Load this configuration": loaded and adopted by the tree, or refused in place."""
        proof.loadRequested.connect(lambda design, params: proof.show_refusal(self.load(design, params, adopt=True)))

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
