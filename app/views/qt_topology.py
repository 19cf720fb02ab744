"""QtTopology(selection): the selected configuration's array as a QGraphicsScene - PEs, I/O and drain
modules along their chains, DRAM ports, FIFOs as arrows labelled with their width; a colour per
array with a legend; hover shows kind, buffers, double buffering and trip counts; wheel zoom and
drag pan. Level of detail: labels only when zoomed in; beyond LARGE PEs, no PE labels and the PE
to PE FIFOs of an array become one path, so hundreds of PEs stay smooth."""
from __future__ import annotations

import math
from collections import Counter

from PySide6.QtCore import QEvent, QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPen, QPolygonF
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
from app.views.topology_layout import layout
from engine.compiler.descriptor import evaluate

KIND_ROLE = 0  # QGraphicsItem.data key holding the item's kind: pe, io, drain, dram, fifo
MODULE_ROLE = 1  # data key of a module's box: its topology node (module name, instance index)
LARGE = 256  # PEs beyond which the cheap drawing is used
MAX_EDGE_ITEMS = 1500
LABEL_SCALE = 0.8  # labels show from this zoom on


def _number(text: str, values: dict) -> str:
    try:
        value = evaluate(text, values)
    except Exception:  # noqa: BLE001 (a tooltip shows the expression when it cannot be evaluated)
        return text
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


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


class QtTopology(QGraphicsView):
    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.setScene(QGraphicsScene(self))
        self.setRenderHint(QPainter.Antialiasing)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.DontSavePainterState, True)
        self.setBackgroundBrush(QColor(theme.BACKGROUND))
        self.legend = QLabel(self)
        self.legend.setStyleSheet(f"background: rgba(38,42,49,220); padding: 6px; border-radius: 4px; color: {theme.TEXT}")
        self.legend.move(8, 8)
        self.labels: list = []  # the text items made so far
        self._label_specs: list[tuple[str, QPointF, bool]] = []  # text, position, centred: not made yet
        self.counts: Counter = Counter()
        self._shown = None
        self._tooltip_texts: dict[str, str] = {}
        self._tooltip_context: tuple[dict, dict] = ({}, {})
        selection.changed.connect(self.refresh)
        self.refresh()

    def scene_items_by_kind(self) -> dict[str, int]:
        return dict(self.counts)

    def refresh(self) -> None:
        s = self.selection
        graph = s.topology() if s.report else None
        if graph is None:
            if self._shown is not None or self.counts:
                self.scene().clear()
                self.labels, self.counts, self._label_specs = [], Counter(), []
            self._shown = None
            self.legend.setText(s.error or (f"evaluating {s.design.id} ..." if s.busy and s.design else "select a design"))
            self.legend.adjustSize()
            return
        key = (s.design.id, tuple(sorted(s.full_values().items())))
        if key == self._shown:
            return
        self._shown = key
        scene = self.scene()
        scene.clear()
        self.labels, self.counts, self._label_specs = [], Counter(), []
        self._draw(graph, self.selection.descriptor, self.selection.full_values())
        scene.setSceneRect(scene.itemsBoundingRect().adjusted(-40, -40, 40, 40))
        self.resetTransform()
        self.fitInView(scene.sceneRect(), Qt.KeepAspectRatio)
        self._update_detail()

    def _draw(self, graph, descriptor: dict, values: dict) -> None:
        boxes, drams = layout(graph, descriptor)
        arrays = list(descriptor["kernel"]["arrays"])
        colour = {a: theme.array_colour(i) for i, a in enumerate(arrays)}
        modules = {m["name"]: m for m in descriptor["topology"]["modules"]}
        self._tooltip_texts, self._tooltip_context = {}, (modules, values)
        n_pe = sum(1 for n in graph.nodes if n[0] == "PE")
        large = n_pe > LARGE
        for node, box in boxes.items():
            m = modules[node[0]]
            kind = m["kind"]
            fill = QColor(theme.PE_COLOUR) if kind == "pe" else QColor(colour.get(m["array"], theme.PE_COLOUR))
            if kind == "drain":
                fill = fill.darker(140)
            item = self._box(box, fill, kind, large and kind == "pe")
            item.setData(MODULE_ROLE, node)  # its tooltip is written when first asked for: see tooltip()
            if not large and box.size >= 20:
                self._label(node[0] if kind != "pe" else f"PE{','.join(map(str, node[1]))}", box)
        for name, box in drams.items():
            item = self._box(box, QColor(theme.DRAM_COLOUR), "dram", False)
            item.setToolTip(f"<b>DRAM port</b> of {name} (array {modules[name]['array']})")
            self._label("DRAM", box)
            first = boxes[next(n for n in graph.nodes if n[0] == name)]
            src, dst = (box, first) if modules[name]["kind"] == "io" else (first, box)
            self._arrow(src, dst, colour[modules[name]["array"]], 512, "AXI", kind="axi")
        self._edges(graph, boxes, colour, large)
        rows = "".join(f"<span style='color:{colour[a].name()}'>&#9632;</span> {a}&nbsp;&nbsp;" for a in arrays)
        self.legend.setText(f"{rows}<br><span style='color:{theme.MUTED}'>{n_pe} PEs, "
                            f"{graph.number_of_edges()} FIFOs; darker = drain</span>")
        self.legend.adjustSize()

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
        return item

    def _label(self, text: str, box) -> None:
        self._label_specs.append((text, QPointF(box.x, box.y + box.size / 2 + 1), True))

    def _edges(self, graph, boxes, colour, large: bool) -> None:
        edges = list(graph.edges(data=True))
        bulk = large or len(edges) > MAX_EDGE_ITEMS
        paths: dict[str, QPainterPath] = {}
        seen_pairs: Counter = Counter()
        for src, dst, data in edges:
            a, b = boxes.get(src), boxes.get(dst)
            if a is None or b is None:
                continue
            if bulk and src[0] == "PE" and dst[0] == "PE":
                path = paths.setdefault(data["array"], QPainterPath())
                path.moveTo(a.x, a.y)
                path.lineTo(b.x, b.y)
                self.counts["fifo"] += 1
                continue
            seen_pairs[(src, dst)] += 1
            offset = 4.0 * (seen_pairs[(src, dst)] - 1)  # several arrays between the same two modules
            self._arrow(a, b, colour[data["array"]], data["width_bits"],
                        None if bulk else f"{data['width_bits']}b", offset)
        for array, path in paths.items():
            item = QGraphicsPathItem(path)
            item.setPen(QPen(colour[array], 1))
            item.setData(KIND_ROLE, "fifo-bundle")
            self.scene().addItem(item)

    def _arrow(self, a, b, colour: QColor, width_bits: int, label: str | None, offset: float = 0.0,
               kind: str = "fifo") -> None:
        line = QLineF(QPointF(a.x, a.y), QPointF(b.x, b.y))
        if line.length() < 1:
            return
        normal = line.normalVector().unitVector()
        shift = QPointF(normal.dx() * offset, normal.dy() * offset)
        unit = line.unitVector()
        d = QPointF(unit.dx(), unit.dy())
        start = line.p1() + d * (a.size / 2 + 2) + shift
        end = line.p2() - d * (b.size / 2 + 2) + shift
        path = QPainterPath(start)
        path.lineTo(end)
        angle = math.atan2(d.y(), d.x())
        head = [end, end - QPointF(math.cos(angle - 0.45), math.sin(angle - 0.45)) * 7,
                end - QPointF(math.cos(angle + 0.45), math.sin(angle + 0.45)) * 7]
        path.addPolygon(QPolygonF(head))
        item = QGraphicsPathItem(path)
        item.setPen(QPen(colour, 1 + min(3.0, math.log2(max(width_bits, 32) / 32) / 2)))
        item.setBrush(QBrush(colour))
        item.setData(KIND_ROLE, kind)
        item.setToolTip(f"{'FIFO' if kind == 'fifo' else 'AXI port'}, {width_bits} bits wide")
        self.scene().addItem(item)
        self.counts[kind] += 1
        if label:
            self._label_specs.append((label, (start + end) / 2 + QPointF(2, -8), False))

    def _update_detail(self) -> None:
        show = self.transform().m11() >= LABEL_SCALE
        if show and self._label_specs:
            self._make_labels()
        for label in self.labels:
            label.setVisible(show)

    def _make_labels(self) -> None:
        """The text items, made when first shown: most views start zoomed out, where they are hidden,
        and hundreds of text items are a good share of a redraw."""
        module_font, fifo_font = QFont(self.font()), QFont(self.font())
        module_font.setPointSizeF(6)
        fifo_font.setPointSizeF(5)
        module_brush, fifo_brush = QBrush(QColor(theme.TEXT)), QBrush(QColor(theme.MUTED))
        for text, at, centred in self._label_specs:
            label = QGraphicsSimpleTextItem(text)
            label.setBrush(module_brush if centred else fifo_brush)
            label.setFont(module_font if centred else fifo_font)
            if centred:  # under its module's box
                at = at - QPointF(label.boundingRect().width() / 2, 0)
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

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.scene() and not self.scene().sceneRect().isEmpty() and self.transform().m11() < 1.01:
            self.fitInView(self.scene().sceneRect(), Qt.KeepAspectRatio)
            self._update_detail()
