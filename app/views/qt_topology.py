"""QtTopology(selection): the selected configuration's array as a QGraphicsScene, titled with its
shape, PE count and SIMD lanes ("i-j__i-j.k: 103 x 2 = 206 PEs x 8 lanes") - PEs, I/O and drain
modules along their chains (long 1-D chains folded into serpentine rows, see topology_layout), DRAM
ports, FIFOs as arrows labelled with their width; hover shows kind, buffers, double buffering and
trip counts; wheel zoom and drag pan.

Colours: by default every module and FIFO by its share of the bottleneck's cycles on the theme's heat
scale: busy cycles from the timed C simulation of the export when one ran for this configuration,
else from the cycle-level simulator when one ran on the full problem (the Verify tab, in a child
process: app/workers/verify_process.py), else the model's module terms in the report; the legend names
the source. Or one colour per array. Level of detail: labels only when zoomed in, placed so that none overlaps another label or
a box (a label that would is left out); beyond LARGE PEs, PE-to-PE FIFOs of an array become one
path and a 2-D array is drawn zoomed out as blocks of PEs with their counts, its PEs when zoomed in.
The legend and the title are labels this view fills; QtTopologyPanel (qt_topology_panel.py) shows
them, the heat scale and an overview minimap beside the scene, never over it."""
from __future__ import annotations

import math
from collections import Counter

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QLabel,
)

from app.models.design_selection import DesignSelection
from app.views import theme
from app.views.topology_layout import THIN, layout, pe_extents, shape_text

KIND_ROLE = 0  # QGraphicsItem.data key holding the item's kind: pe, io, drain, dram, fifo
MODULE_ROLE = 1  # data key of a module's box: its topology node (module name, instance index)
LARGE = 256  # PEs beyond which the cheap drawing is used
MAX_EDGE_ITEMS = 1500
LABEL_SCALE = 0.8  # labels show from this zoom on
BLOCKS = 8  # a large 2-D array is drawn zoomed out as at most BLOCKS x BLOCKS blocks of PEs
BLOCK_SCALE = 0.25  # below this zoom a large 2-D array shows its blocks, above it its PEs
COLOUR_MODES = ("load", "arrays", "SLR")
CLEAR_DELAY_MS = 250  # a selection still evaluating after this long has the previous array taken down


def _number(text: str, values: dict) -> str:
    from engine.compiler.expressions import evaluate  # loaded with the selection's first evaluation

    try:
        value = evaluate(text, values)
    except Exception:  # noqa: BLE001 (a tooltip shows the expression when it cannot be evaluated)
        return text
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def simd_lanes(descriptor: dict, values: dict) -> int:
    from engine.compiler.expressions import evaluate  # loaded with the selection's first evaluation

    return int(evaluate(descriptor["topology"]["simd"], values))


def module_tooltip(module: dict, index: tuple, values: dict) -> str:
    lines = [f"<b>{module['name']}</b> {list(index) if index else ''}",
             f"kind: {module['kind']}" + (f", array {module['array']}, level L{module['level']}"
                                          if module["array"] else "") + (", reads/writes DRAM" if module["dram"] else "")]
    for b in module["buffers"]:
        lines.append(f"buffer {b['name']}: {_number(b['elements'], values)} elements "
                     f"({b['storage']}, {'double' if b['double_buffered'] else 'single'} buffered)")
    if not module["buffers"]:
        lines.append("no local buffer")
    for phase in module["phases"]:
        trips = ", ".join(f"{l['name']} {_number(l['trip'], values)}" for l in phase["loops"])
        lines.append(f"{phase['name']}: {trips} (II {_number(phase['ii'], values)})")
    return "<br>".join(lines)


def module_shares(report: dict | None) -> dict[str, float]:
    """Each module's term as a share of the bottleneck's (the largest), from the report."""
    if not report or not report.get("modules"):
        return {}
    return cycle_shares(report["modules"])


def cycle_shares(cycles: dict[str, float]) -> dict[str, float]:
    top = max(cycles.values(), default=0.0) or 1.0
    return {name: c / top for name, c in cycles.items()}


def heat_source(selection: DesignSelection) -> tuple[str, dict[str, float]]:
    """(where the load colours come from, module -> share of the bottleneck's cycles): a simulation
    of the configuration shown when one ran (the most trusted first), else the model."""
    measured = selection.measured_cycles() if hasattr(selection, "measured_cycles") else None
    if measured is not None:
        return measured[0], cycle_shares(measured[1])
    return "model", module_shares(selection.report)


class QtTopology(QGraphicsView):
    viewChanged = Signal()  # zoomed, panned or redrawn (the minimap follows)

    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.colour_mode = COLOUR_MODES[0]
        self.setScene(QGraphicsScene(self))
        # no BSP index: the scene is rebuilt on every selection, and indexing its items cost the
        # window 15-25 ms of CPU per redraw (a deferred scene call); lookups (hover) are linear instead
        self.scene().setItemIndexMethod(QGraphicsScene.NoIndex)
        self.setRenderHint(QPainter.Antialiasing)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.DontSavePainterState, True)
        self.setBackgroundBrush(QColor(theme.BACKGROUND))
        self.legend = QLabel()  # shown beside the view by QtTopologyPanel
        self.title = QLabel()  # the array's shape, PEs and lanes: shown above the view by QtTopologyPanel
        self.title.setObjectName("headline")
        self.legend.setWordWrap(True)
        self.labels: list = []  # the text items made so far
        self.blocks: list = []  # block items of a large 2-D array (zoomed out)
        self._pe_items: list = []
        self._taken: list[QRectF] = []  # scene rectangles of boxes and placed labels
        self._bundles: dict[tuple, QPainterPath] = {}  # arrows not yet made into items, see _arrow
        self._label_specs: list[tuple[str, QPointF, bool]] = []  # text, position, centred: not made yet
        self.counts: Counter = Counter()
        self._shown = None
        self._tooltip_texts: dict[str, str] = {}
        self._pending_edges: tuple | None = None  # _edges' arguments until the FIFOs are drawn
        self._tooltip_context: tuple[dict, dict] = ({}, {})
        self.heat_from = ""  # "model", "simulator" or "timed C simulation" while coloured by load
        self.floorplan = None  # a FloorplanSession: the SLR of every process when coloured by SLR
        # While a newly selected design evaluates (tens of milliseconds when its model is cached) the
        # previous array stays instead of being taken down at once: taking it down cost a scene pass
        # and repaints of its own per click, and the redraw then clears it in the same pass as it
        # draws. Only an evaluation slower than CLEAR_DELAY_MS (or failing) clears it first.
        self._clear_timer = QTimer(self)
        self._clear_timer.setSingleShot(True)
        self._clear_timer.setInterval(CLEAR_DELAY_MS)
        self._clear_timer.timeout.connect(self._clear_stale)
        selection.changed.connect(self.refresh)
        if hasattr(selection, "measuredChanged"):  # a compare view's pin has no simulations
            selection.measuredChanged.connect(self._measured)
        self.horizontalScrollBar().valueChanged.connect(self.viewChanged)
        self.verticalScrollBar().valueChanged.connect(self.viewChanged)
        self.refresh()

    def follow_floorplan(self, floorplan) -> None:
        """Colour by SLR from this FloorplanSession (solved in its worker), redrawn when it reports."""
        self.floorplan = floorplan
        floorplan.changed.connect(self._floorplan_changed)

    def _floorplan_changed(self) -> None:
        if self.colour_mode == "SLR" and self._shown is not None:
            self._shown = None
            self.refresh()

    def slr_plan(self):
        """The floorplan of the configuration shown (None: not solved yet, or none fits)."""
        f = self.floorplan
        return f.plan if f is not None and f.is_current() else None

    def set_colour_mode(self, mode: str) -> None:
        if mode != self.colour_mode:
            self.colour_mode, self._shown = mode, None
            self.refresh()

    def _measured(self) -> None:
        """A simulation reported: redraw if the configuration shown now has other colours."""
        if self.colour_mode == "load" and self._shown is not None and heat_source(self.selection)[0] != self.heat_from:
            self._shown = None
            self.refresh()

    def scene_items_by_kind(self) -> dict[str, int]:
        self.finish_drawing()
        return dict(self.counts)

    def finish_drawing(self) -> None:
        """Draw the FIFOs now if they are still to come. (Drawing them in the event after the boxes,
        through a queued call, was tried and taken back: the GUI test process then segfaulted in
        test_topology_heat after test_topology, a queued call outliving its view being the suspect.)"""
        pending, self._pending_edges = self._pending_edges, None
        if pending is not None:
            self._edges(*pending)
            self.viewport().update()

    def _clear_stale(self) -> None:
        """The selection is still evaluating another design than the one drawn: take the drawing down."""
        s = self.selection
        if self._shown is not None and s.report is None and (s.design is None or self._shown[0] != s.design.id):
            self._clear()
            self._shown = None
            self.legend.setText(f"evaluating {s.design.id} ..." if s.design is not None else "select a design")
            self.title.setText(s.design.id if s.design is not None else "")

    def restyle(self) -> None:
        """Another theme: the scene drawn again in its colours."""
        self.setBackgroundBrush(QColor(theme.BACKGROUND))
        self._shown = None
        self.refresh()

    def refresh(self) -> None:
        s = self.selection
        graph = s.topology() if s.report else None
        if graph is None:
            stale = self._shown is not None and (s.design is None or self._shown[0] != s.design.id)
            if s.busy and s.design is not None and not s.error and stale:
                # another design evaluating: the previous array and its legend stay for a moment (see
                # __init__), neither greyed nor relabelled: either cost repaints of their own for the
                # few milliseconds the evaluation takes (the design tree and the numbers panel already
                # show the new design)
                if not self._clear_timer.isActive():
                    self._clear_timer.start()
                return
            if s.error and self._shown is not None and not stale:
                # an illegal edit: the last valid array stays, greyed, with the violation beside it
                self.setEnabled(False)
                self.legend.setText(f"<span style='color:{theme.ERROR}'>{s.error}</span><br>"
                                    f"<span style='color:{theme.MUTED}'>showing the last valid configuration</span>")
                return
            self._clear_timer.stop()
            if self._shown is not None or self.counts:
                self._clear()
            self._shown = None
            self.setEnabled(True)
            self.legend.setText(s.error or (f"evaluating {s.design.id} ..." if s.busy and s.design else
                                            s.topology_note if s.report else "select a design"))
            self.title.setText(s.design.id if s.design is not None else "")
            return
        self._clear_timer.stop()
        self.setEnabled(True)
        key = (s.design.id, tuple(sorted(s.full_values().items())))
        if key == self._shown:
            return
        self._shown = key
        scene = self.scene()
        self._clear()
        self._draw(graph, self.selection.descriptor, self.selection.full_values())
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-40, -40, 40, 40))
        self.resetTransform()
        self.fitInView(scene.sceneRect(), Qt.KeepAspectRatio)
        self._update_detail()
        self.viewChanged.emit()

    def _clear(self) -> None:
        self.scene().clear()
        self.labels, self.counts, self._label_specs = [], Counter(), []
        self.blocks, self._pe_items, self._taken, self._bundles = [], [], [], {}
        self._pending_edges = None

    def _draw(self, graph, descriptor: dict, values: dict) -> None:
        boxes, drams = layout(graph, descriptor)
        arrays = list(descriptor["kernel"]["arrays"])
        colour = {a: theme.array_colour(i) for i, a in enumerate(arrays)}
        modules = {m["name"]: m for m in descriptor["topology"]["modules"]}
        self.heat_from, shares = heat_source(self.selection) if self.colour_mode == "load" else ("", {})
        self._tooltip_texts, self._tooltip_context = {}, (modules, values)
        n_pe = sum(1 for n in graph.nodes if n[0] == "PE")
        large = n_pe > LARGE
        shape = shape_text(pe_extents(graph), simd_lanes(descriptor, values), n_pe)
        self.title.setText(f"{self.selection.design.id}: {shape}")

        def fill_of(name: str) -> QColor:
            if shares:
                return theme.heat_colour(shares.get(name, 0.0))
            m = modules[name]
            fill = QColor(theme.PE_COLOUR) if m["kind"] == "pe" else QColor(colour.get(m["array"], theme.PE_COLOUR))
            return fill.darker(140) if m["kind"] == "drain" else fill

        heat = {name: theme.heat_colour(shares.get(name, 0.0)) for name in modules} if shares else {}

        def edge_colour(name: str, array: str) -> QColor:
            return heat[name] if shares else colour[array]

        fills = {name: fill_of(name) for name in modules}
        plan = self.slr_plan() if self.colour_mode == "SLR" else None
        for node, box in boxes.items():
            kind = modules[node[0]]["kind"]
            fill = fills[node[0]]
            if self.colour_mode == "SLR":
                slr = plan.slr_of.get(node) if plan is not None else None
                fill = QColor(theme.SLR_COLOURS[slr % len(theme.SLR_COLOURS)]) if slr is not None else \
                    QColor(theme.PE_COLOUR).darker(160)
            item = self._box(box, fill, kind, large and kind == "pe")
            item.setData(MODULE_ROLE, node)  # its tooltip is written when first asked for: see tooltip()
            if kind == "pe":
                self._pe_items.append(item)
        for node, box in boxes.items():  # labels after every box: a label never covers a box
            kind = modules[node[0]]["kind"]
            if not large and box.size >= 20:
                self._label(node[0] if kind != "pe" else f"PE{','.join(map(str, node[1]))}", box)
        for name, box in drams.items():
            item = self._box(box, QColor(theme.DRAM_COLOUR), "dram", False)
            item.setToolTip(f"<b>DRAM port</b> of {name} (array {modules[name]['array']})")
            self._label("DRAM", box)
            first = boxes[next(n for n in graph.nodes if n[0] == name)]
            src, dst = (box, first) if modules[name]["kind"] == "io" else (first, box)
            self._arrow(src, dst, edge_colour(name, modules[name]["array"]), 512, "AXI", kind="axi")
        self._edges(graph, boxes, edge_colour, large)
        if large and len(descriptor["topology"]["pe_grid"]) >= 2:
            self._blocks(graph, boxes, fills["PE"])
        n_edges = graph.number_of_edges()
        if self.colour_mode == "SLR":
            text = self._slr_legend(plan)
        elif shares:
            top = max(shares, key=shares.get)
            ranked = sorted(shares.items(), key=lambda kv: -kv[1])[:4]
            rows = "<br>".join(f"<span style='color:{theme.heat_colour(v).name()}'>&#9632;</span> {n} {v:.0%}"
                               for n, v in ranked)
            what = {"model": "the model's module terms", "simulator": "busy cycles in the simulator",
                    "timed C simulation": "busy cycles in the timed C simulation of the export"}[self.heat_from]
            text = (f"<b>load</b> from the <b>{self.heat_from}</b>: share of the bottleneck's cycles ({top}; "
                    f"{what})<br>{rows}")
        else:
            text = "<b>arrays</b><br>" + "<br>".join(
                f"<span style='color:{colour[a].name()}'>&#9632;</span> {a}" for a in arrays) + "<br>darker = drain"
        self.legend.setText(f"{text}<br><span style='color:{theme.MUTED}'>{n_pe} PEs, {n_edges} FIFOs</span>")

    def _slr_legend(self, plan) -> str:
        """Per SLR its colour, most used resource and process count, then the crossings (the clock
        estimates are the detail panel's)."""
        f = self.floorplan
        if plan is None:
            if f is not None and f.error:
                return f"<b>SLR</b><br><span style='color:{theme.ERROR}'>{f.error}</span>"
            if f is not None and f.is_current() and f.solved:
                return f"<b>SLR</b><br>{f.estimate.floorplanned_reason}"
            return "<b>SLR</b><br>solving the floorplan (SCIP, in the background) ..."
        rows = []
        for slr in range(len(plan.used)):
            resource, share = max(plan.utilisation(slr).items(), key=lambda kv: kv[1])
            rows.append(f"<span style='color:{theme.SLR_COLOURS[slr % len(theme.SLR_COLOURS)]}'>&#9632;</span> "
                        f"SLR{slr}: {resource} {share:.0%}, {len(plan.instances(slr))} proc.")
        crossings = "<br>".join(f"SLR{b.below}-{b.below + 1}: {b.wires:,} / {b.capacity:,} wires"
                                for b in plan.boundaries if b.fifos)
        return (f"<b>SLR</b> (cap {plan.cap:.0%})<br>" + "<br>".join(rows)
                + (f"<br><b>crossings</b><br>{crossings}" if crossings else "<br>no crossings"))

    def _blocks(self, graph, boxes, fill: QColor) -> None:
        """Blocks of PEs with their counts, shown instead of the PEs when zoomed out."""
        pes = [n for n in graph.nodes if n[0] == "PE"]
        rows = max(n[1][0] for n in pes) + 1
        cols = max(n[1][1] for n in pes) + 1
        if max(rows, cols) >= THIN * min(rows, cols):
            return  # a thin array is folded into bands (topology_layout): blocks would straddle them
        step_r, step_c = math.ceil(rows / BLOCKS), math.ceil(cols / BLOCKS)
        groups: dict[tuple, list] = {}
        for node in pes:
            groups.setdefault((node[1][0] // step_r, node[1][1] // step_c), []).append(boxes[node])
        font = QFont(self.font())
        font.setPointSizeF(28)
        for members in groups.values():
            x0 = min(b.x - b.size / 2 for b in members)
            y0 = min(b.y - b.size / 2 for b in members)
            x1 = max(b.x + b.size / 2 for b in members)
            y1 = max(b.y + b.size / 2 for b in members)
            item = QGraphicsRectItem(QRectF(x0, y0, x1 - x0, y1 - y0))
            item.setBrush(QBrush(fill))
            item.setPen(QPen(fill.lighter(160), 2))
            item.setData(KIND_ROLE, "pe-block")
            item.setZValue(3)
            item.setToolTip(f"{len(members)} PEs: zoom in to see them")
            self.scene().addItem(item)
            label = QGraphicsSimpleTextItem(f"{len(members)} PEs", item)
            label.setFont(font)
            label.setBrush(QBrush(QColor(theme.TEXT)))
            r = label.boundingRect()
            if r.width() < (x1 - x0) * 0.9:
                label.setPos((x0 + x1 - r.width()) / 2, (y0 + y1 - r.height()) / 2)
            else:
                label.setVisible(False)
            self.blocks.append(item)

    def tooltip(self, item) -> str:
        """A module box's hover text, evaluated on first use (the trip counts are symbolic: evaluating
        every module's at drawing time would cost a redraw tens of milliseconds)."""
        node = item.data(MODULE_ROLE)
        if node and not item.toolTip():
            modules, values = self._tooltip_context
            if node[0] not in self._tooltip_texts:  # one text per module: the instances share their parameters
                self._tooltip_texts[node[0]] = module_tooltip(modules[node[0]], (), values)
            text = self._tooltip_texts[node[0]]
            item.setToolTip(text.replace("</b> ", f"</b> {list(node[1])} ", 1) if node[1] else text)
        return item.toolTip()

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.ToolTip:
            for item in self.items(event.pos()):
                if item.data(MODULE_ROLE):
                    self.tooltip(item)
                    break
        return super().viewportEvent(event)

    def _box(self, box, fill: QColor, kind: str, cheap: bool) -> QGraphicsRectItem:
        item = QGraphicsRectItem(QRectF(box.x - box.size / 2, box.y - box.size / 2, box.size, box.size))
        item.setBrush(QBrush(fill))
        item.setPen(QPen(Qt.NoPen) if cheap else QPen(fill.lighter(150), 1))
        item.setData(KIND_ROLE, kind)
        item.setZValue(1)
        item.setAcceptHoverEvents(True)
        self.scene().addItem(item)
        self.counts[kind] += 1
        self._taken.append(item.rect())
        return item

    def _label(self, text: str, box) -> None:
        self._label_specs.append((text, QPointF(box.x, box.y + box.size / 2 + 1), True))

    def _edges(self, graph, boxes, edge_colour, large: bool) -> None:
        edges = list(graph.edges(data=True))
        bulk = large or len(edges) > MAX_EDGE_ITEMS
        paths: dict[str, QPainterPath] = {}
        seen_pairs: Counter = Counter()
        for src, dst, data in edges:
            a, b = boxes.get(src), boxes.get(dst)
            if a is None or b is None:
                continue
            if bulk and src[0] == "PE" and dst[0] == "PE":
                path = paths.setdefault((src[0], data["array"]), QPainterPath())
                path.moveTo(a.x, a.y)
                path.lineTo(b.x, b.y)
                self.counts["fifo"] += 1
                continue
            seen_pairs[(src, dst)] += 1
            offset = 4.0 * (seen_pairs[(src, dst)] - 1)  # several arrays between the same two modules
            self._arrow(a, b, edge_colour(src[0], data["array"]), data["width_bits"],
                        None if bulk else f"{data['width_bits']}b", offset)
        for (name, array), path in paths.items():
            item = QGraphicsPathItem(path)
            item.setPen(QPen(edge_colour(name, array), 1))
            item.setData(KIND_ROLE, "fifo-bundle")
            self.scene().addItem(item)
        self._flush_arrows()

    def _flush_arrows(self) -> None:
        for (kind, rgba, width_bits), path in self._bundles.items():
            colour = QColor.fromRgba(rgba)
            item = QGraphicsPathItem(path)
            item.setPen(QPen(colour, 1 + min(3.0, math.log2(max(width_bits, 32) / 32) / 2)))
            item.setBrush(QBrush(colour))
            item.setData(KIND_ROLE, kind)
            item.setToolTip(f"{'FIFOs' if kind == 'fifo' else 'AXI ports'}, {width_bits} bits wide")
            self.scene().addItem(item)
        self._bundles = {}

    def _arrow(self, a, b, colour: QColor, width_bits: int, label: str | None, offset: float = 0.0,
               kind: str = "fifo") -> None:
        # plain float arithmetic: thousands of arrows per redraw, and every Qt value object made
        # from Python costs a wrapper
        dx, dy = b.x - a.x, b.y - a.y
        length = math.hypot(dx, dy)
        if length < 1:
            return
        ux, uy = dx / length, dy / length
        sx, sy = -uy * offset, ux * offset  # the normal's shift (several arrays between two modules)
        x0, y0 = a.x + ux * (a.size / 2 + 2) + sx, a.y + uy * (a.size / 2 + 2) + sy
        x1, y1 = b.x - ux * (b.size / 2 + 2) + sx, b.y - uy * (b.size / 2 + 2) + sy
        # arrows of one colour, width and kind share one path item: hundreds of items (each with its
        # own tooltip) made a redraw of a 2-D array take a few hundred milliseconds
        key = (kind, colour.rgba(), width_bits)
        path = self._bundles.get(key)
        if path is None:
            path = self._bundles[key] = QPainterPath()
        path.moveTo(x0, y0)
        path.lineTo(x1, y1)
        angle = math.atan2(uy, ux)
        path.moveTo(x1, y1)
        path.lineTo(x1 - math.cos(angle - 0.45) * 7, y1 - math.sin(angle - 0.45) * 7)
        path.lineTo(x1 - math.cos(angle + 0.45) * 7, y1 - math.sin(angle + 0.45) * 7)
        path.closeSubpath()
        self.counts[kind] += 1
        if label:
            self._label_specs.append((label, QPointF((x0 + x1) / 2 + 2, (y0 + y1) / 2 - 8), False))

    def _update_detail(self) -> None:
        scale = self.transform().m11()
        show = scale >= LABEL_SCALE
        if show:
            self.finish_drawing()  # the FIFOs' labels come with them
        if show and self._label_specs:
            self._make_labels()
        for label in self.labels:
            label.setVisible(show)
        if self.blocks:
            zoomed_out = scale < BLOCK_SCALE
            for block in self.blocks:
                block.setVisible(zoomed_out)
            for item in self._pe_items:
                item.setVisible(not zoomed_out)

    def _make_labels(self) -> None:
        """The text items, made when first shown: most views start zoomed out, where they are hidden,
        and hundreds of text items are a good share of a redraw."""
        module_font, fifo_font = QFont(self.font()), QFont(self.font())
        module_font.setPointSizeF(6)
        fifo_font.setPointSizeF(5)
        module_brush, fifo_brush = QBrush(QColor(theme.TEXT)), QBrush(QColor(theme.MUTED))
        metrics = {True: QFontMetricsF(module_font), False: QFontMetricsF(fifo_font)}
        for text, at, centred in self._label_specs:
            width, height = metrics[centred].horizontalAdvance(text), metrics[centred].height()
            if centred:  # under its module's box
                at = at - QPointF(width / 2, 0)
            rect = QRectF(at.x(), at.y(), width, height)
            if any(rect.intersects(other) for other in self._taken):
                continue  # it would cover a box or another label: left out (the hover text has it)
            self._taken.append(rect)
            label = QGraphicsSimpleTextItem(text)
            label.setBrush(module_brush if centred else fifo_brush)
            label.setFont(module_font if centred else fifo_font)
            label.setPos(at)
            label.setZValue(2)
            self.scene().addItem(label)
            self.labels.append(label)
        self._label_specs = []

    def wheelEvent(self, event) -> None:
        factor = 1.15 ** (event.angleDelta().y() / 120)
        scale = self.transform().m11() * factor
        if 0.02 <= scale <= 20:
            self.scale(factor, factor)
            self._update_detail()
            self.viewChanged.emit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.scene() and not self.scene().sceneRect().isEmpty() and self.transform().m11() < 1.01:
            self.fitInView(self.scene().sceneRect(), Qt.KeepAspectRatio)
            self._update_detail()
        self.viewChanged.emit()
