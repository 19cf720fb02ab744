"""QtBottleneck(selection): where the selected configuration's time goes. The latency split into
prologue / main / epilogue (a stacked bar with its legend, cycles and microseconds at the design's
clock), then every module's term as a sorted bar in cycles and microseconds, the critical one
marked, each with what relieves it: the parameters its symbolic term depends on and the change of
one of them that shortens the term most within the device's full budget (selection_evaluation.
module_levers; a better step that breaks the budget is named with the resources it breaks), applied
by a click on its line. Module names and terms are read from the report, whatever modules a model
has."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QLabel, QScrollArea, QVBoxLayout, QWidget

from app.models.design_selection import DesignSelection
from app.views import theme

PHASE_COLOURS = {"prologue": "#ffb454", "main": theme.ACCENT, "epilogue": "#c792ea"}
ROW = 24  # pixels per module row
NAME_WIDTH = 110
NUMBERS_WIDTH = 230


def microseconds(cycles: float, clock_mhz: float) -> float:
    return cycles / clock_mhz


def best_lever(levers: list, cycles: float):
    """The legal change within the device's budget that shortens the term most (None if none does)."""
    better = [lv for lv in levers if lv.fits and lv.cycles < cycles]
    return min(better, key=lambda lv: lv.cycles) if better else None


def _shorter(lever, cycles: float) -> str:
    gain = 1 - lever.cycles / cycles
    return f"{gain:.0%}" if gain >= 0.005 else "under 1%"


def lever_text(levers: list, cycles: float) -> str:
    """What relieves the term: the best step that fits (applied by a click on the line), and a
    better one that breaks the budget marked with the resources it breaks."""
    if not levers:
        return "no tuning parameter in its term"
    names = sorted({lv.param for lv in levers})
    best = best_lever(levers, cycles)
    beyond = [lv for lv in levers if lv.legal and lv.over and lv.cycles < (best.cycles if best else cycles)]
    note = ""
    if beyond:
        top = min(beyond, key=lambda lv: lv.cycles)
        note = (f"; {top.param} -> {top.new} would be {_shorter(top, cycles)} shorter but needs "
                f"{', '.join(top.over)} of the budget")
    if best is None:
        return f"depends on {', '.join(names)}; no single step within the budget shortens it{note}"
    return (f"{best.param} {best.old} -> {best.new}: {_shorter(best, cycles)} shorter, click to apply"
            f"  (depends on {', '.join(names)}){note}")


class PhaseBar(QWidget):
    """prologue / main / epilogue as a stacked bar, with a legend line under it."""

    def __init__(self, parent=None, *, legend: bool = True):
        """`legend=False`: the bar alone (a panel that shows the legend as text, see legend_html)."""
        super().__init__(parent)
        self.parts: dict[str, float] = {}
        self.clock = 300.0
        self.legend = legend
        self.setMinimumHeight(40 if legend else 16)
        policy = self.sizePolicy()
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def set_parts(self, parts: dict[str, float], clock_mhz: float) -> None:
        self.parts, self.clock = parts, clock_mhz
        self._fit()
        self.update()

    def _entries(self) -> list[tuple[str, str, float]]:
        metrics = self.fontMetrics()
        return [(name, text, 14 + metrics.horizontalAdvance(text) + 16) for name, text in
                ((n, f"{n} {v:,.0f} cycles ({microseconds(v, self.clock):,.1f} µs)") for n, v in self.parts.items())]

    def _lines(self, width: float) -> int:
        lines, x = 1, 0.0
        for _, _, w in self._entries():
            if x > 0 and x + w > width:
                lines, x = lines + 1, 0.0
            x += w
        return lines

    def _fit(self) -> None:
        """The legend wraps to the width: the widget is as high as its lines (set before painting,
        so the layout places what follows under it)."""
        height = 22 + 18 * self._lines(max(self.width(), 50)) if self.legend else 16
        if self.minimumHeight() != height:
            self.setMinimumHeight(height)
            self.updateGeometry()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return 22 + 18 * self._lines(max(width, 50)) if self.legend else 16

    def sizeHint(self) -> QSize:
        return QSize(300, self.heightForWidth(max(self.width(), 300)))

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        bar = QRectF(0, 0, self.width(), 16)
        painter.fillRect(bar, QColor(theme.PANEL))
        total = sum(self.parts.values())
        x = 0.0
        for name, value in self.parts.items():
            w = bar.width() * value / total if total else 0
            painter.fillRect(QRectF(x, 0, w, 16), QColor(PHASE_COLOURS[name]))
            x += w
        if not self.legend:
            return
        x, y = 0.0, 20.0
        painter.setPen(self.palette().windowText().color())
        for name, text, width in self._entries():
            if x > 0 and x + width > self.width():  # the legend wraps rather than being cut
                x, y = 0.0, y + 18
            painter.fillRect(QRectF(x, y + 4, 10, 10), QColor(PHASE_COLOURS[name]))
            painter.drawText(QRectF(x + 14, y, width, 18), Qt.AlignLeft | Qt.AlignVCenter, text)
            x += width


def legend_html(parts: dict[str, float], clock_mhz: float) -> str:
    """The phases' legend as rich text (a QLabel wraps it and the layout knows its height)."""
    return "<br>".join(f"<span style='color:{PHASE_COLOURS[name]}'>&#9632;</span> {name} {value:,.0f} cycles "
                       f"({microseconds(value, clock_mhz):,.1f} µs)" for name, value in parts.items())


class ModuleBars(QWidget):
    """One row per module, longest term first: name, bar (share of the bottleneck), cycles and µs,
    and what relieves it; a click on that line applies its step (`applied`) when one fits."""

    applied = Signal(object)  # the Lever clicked

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list[tuple[str, float, str]] = []  # module, cycles, lever text
        self.steps: list = []  # per row, the Lever a click applies (None: nothing to apply)
        self.critical = ""
        self.clock = 300.0
        self.setMouseTracking(True)

    def set_rows(self, rows: list[tuple[str, float, str]], critical: str, clock_mhz: float,
                 steps: list | None = None) -> None:
        self.rows, self.critical, self.clock = rows, critical, clock_mhz
        self.steps = list(steps) if steps is not None else [None] * len(rows)
        self.setMinimumHeight(ROW * 2 * len(rows) + 4)
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(600, ROW * 2 * len(self.rows) + 4)

    def paintEvent(self, event) -> None:
        if not self.rows:
            return
        painter = QPainter(self)
        top = max(cycles for _, cycles, _ in self.rows) or 1.0
        text = self.palette().windowText().color()
        muted, accent = QColor(theme.MUTED), QColor(theme.ACCENT)
        bold = QFont(self.font())
        bold.setBold(True)
        bar_width = max(60.0, self.width() - NAME_WIDTH - NUMBERS_WIDTH - 12)
        for k, (name, cycles, lever) in enumerate(self.rows):
            y = k * ROW * 2
            critical = name == self.critical
            painter.setFont(bold if critical else self.font())
            painter.setPen(text)
            painter.drawText(QRectF(0, y, NAME_WIDTH - 6, ROW), Qt.AlignLeft | Qt.AlignVCenter,
                             ("▶ " if critical else "") + name)
            share = cycles / top
            painter.fillRect(QRectF(NAME_WIDTH, y + 5, bar_width, ROW - 10), QColor(theme.PANEL))
            painter.fillRect(QRectF(NAME_WIDTH, y + 5, bar_width * share, ROW - 10), theme.heat_colour(share))
            painter.drawText(QRectF(NAME_WIDTH + bar_width + 8, y, NUMBERS_WIDTH, ROW), Qt.AlignLeft | Qt.AlignVCenter,
                             f"{cycles:,.0f} cyc  {microseconds(cycles, self.clock):,.1f} µs  {share:.0%}")
            painter.setFont(self.font())
            painter.setPen(accent if self.steps[k] is not None else muted)
            painter.drawText(self.lever_rect(k), Qt.AlignLeft | Qt.AlignVCenter, lever)

    def lever_rect(self, k: int) -> QRectF:
        """Where row k's lever line is drawn (and clicked)."""
        return QRectF(NAME_WIDTH, k * ROW * 2 + ROW - 4, self.width() - NAME_WIDTH, ROW)

    def step_at(self, pos) -> object:
        """The Lever whose line is under `pos` (None if none, or it has nothing to apply)."""
        k = int(pos.y() // (ROW * 2))
        if 0 <= k < len(self.rows) and self.lever_rect(k).contains(pos):
            return self.steps[k]
        return None

    def mouseMoveEvent(self, event) -> None:
        hand = self.step_at(event.position()) is not None
        self.setCursor(Qt.PointingHandCursor if hand else Qt.ArrowCursor)

    def mousePressEvent(self, event) -> None:
        step = self.step_at(event.position())
        if step is not None and event.button() == Qt.LeftButton:
            self.applied.emit(step)


class QtBottleneck(QWidget):
    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.headline = QLabel("select a design")
        self.headline.setObjectName("headline")
        self.headline.setWordWrap(True)
        self.phases = PhaseBar()
        self.modules = ModuleBars()
        caption = QLabel("module terms (the model's cycles per module; the longest sets the main phase), "
                         "longest first; under each, the step of one parameter that shortens it most "
                         "within the device's budget (click it to apply it)")
        caption.setObjectName("muted")
        caption.setWordWrap(True)
        scroll = QScrollArea()
        scroll.setWidget(self.modules)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.headline)
        layout.addWidget(self.phases)
        layout.addWidget(caption)
        layout.addWidget(scroll, 1)
        self.modules.applied.connect(self.apply)
        selection.changed.connect(self.refresh)
        self.refresh()

    def _ordered(self) -> list[tuple[str, float]]:
        report = self.selection.report
        return sorted(report["modules"].items(), key=lambda kv: -kv[1]) if report else []

    def rows(self) -> list[tuple[str, float, str]]:
        levers = self.selection.levers
        return [(name, cycles, lever_text(levers.get(name, []), cycles)) for name, cycles in self._ordered()]

    def steps(self) -> list:
        """Per row, the step a click applies: the best one within the budget (None if none)."""
        levers = self.selection.levers
        return [best_lever(levers.get(name, []), cycles) for name, cycles in self._ordered()]

    def apply(self, lever) -> None:
        """The step becomes the selection's value, as if typed in the detail panel."""
        s = self.selection
        if s.design is not None and s.values.get(lever.param) == lever.old:
            s.set_value(lever.param, str(lever.new))

    def refresh(self) -> None:
        s = self.selection
        report = s.report
        if report is None:
            self.setEnabled(not s.error)  # an illegal edit: the last valid result stays, greyed
            if s.error:
                self.headline.setText(f"<span style='color:{theme.ERROR}'>{s.error}</span>")
            elif s.design is None:
                self.headline.setText("select a design")
                self.phases.set_parts({}, 300.0)
                self.modules.set_rows([], "", 300.0)
            return
        self.setEnabled(True)
        clock = report["device"]["clock_mhz"]
        neck = report["bottleneck"]
        total = report["latency_cycles"]
        second = sorted(report["modules"].values(), reverse=True)[1:2]
        near = f"; the next is at {second[0] / report['modules'][neck]:.0%} of it" if second else ""
        self.headline.setText(f"{total:,.0f} cycles = {microseconds(total, clock):,.1f} µs at {clock:g} MHz; "
                              f"bottleneck <b>{neck}</b>{near}")
        self.phases.set_parts({k: report[k] for k in ("prologue", "main", "epilogue")}, clock)
        self.modules.set_rows(self.rows(), neck, clock, self.steps())
