"""QtDesignDetail(selection): the selected design's parameters, editable with live validation (the
broken constraint shown in place), predicted latency split into prologue / main / epilogue with the
bottleneck module, DSP / BRAM18K / URAM / LUT / FF as bars against the device, off-chip traffic and
throughput."""
from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from app.models.design_selection import DesignSelection
from app.views import theme
from engine.models.device import RESOURCE_NAMES

RESOURCE_KEYS = {"DSP": "dsp", "BRAM18K": "bram18k", "URAM": "uram", "LUT": "lut", "FF": "ff"}
PHASE_COLOURS = {"prologue": "#ffb454", "main": theme.ACCENT, "epilogue": "#c792ea"}


class _LatencyBar(QWidget):
    """A stacked bar: prologue / main / epilogue shares of the latency."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.parts: dict[str, float] = {}
        self.setMinimumHeight(16)

    def set_parts(self, parts: dict[str, float]) -> None:
        self.parts = parts
        self.update()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(theme.PANEL))
        total = sum(self.parts.values())
        x = 0.0
        for name, value in self.parts.items():
            w = self.width() * value / total if total else 0
            painter.fillRect(QRectF(x, 0, w, self.height()), QColor(PHASE_COLOURS[name]))
            x += w


def _resource_bar() -> QProgressBar:
    bar = QProgressBar()
    bar.setRange(0, 1000)
    bar.setTextVisible(True)
    return bar


class QtDesignDetail(QWidget):
    def __init__(self, selection: DesignSelection, parent=None):
        super().__init__(parent)
        self.selection = selection
        self.title = QLabel("no design selected")
        self.title.setObjectName("headline")
        self.title.setWordWrap(True)
        self.params_box = QGroupBox("parameters")
        self.params_form = QFormLayout(self.params_box)
        self.editors: dict[str, QLineEdit] = {}
        self.packing = QLabel()
        self.packing.setObjectName("muted")
        self.packing.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)

        latency_box = QGroupBox("predicted latency")
        self.latency = QLabel()
        self.latency.setWordWrap(True)
        self.latency_bar = _LatencyBar()
        self.bottleneck = QLabel()
        lat = QVBoxLayout(latency_box)
        lat.addWidget(self.latency)
        lat.addWidget(self.latency_bar)
        lat.addWidget(self.bottleneck)

        resources_box = QGroupBox("resources against the device")
        grid = QGridLayout(resources_box)
        self.bars: dict[str, QProgressBar] = {}
        for row, name in enumerate(RESOURCE_NAMES):
            grid.addWidget(QLabel(name), row, 0)
            self.bars[name] = _resource_bar()
            grid.addWidget(self.bars[name], row, 1)
        self.traffic = QLabel()
        self.traffic.setWordWrap(True)
        self.throughput = QLabel()
        self.throughput.setObjectName("headline")
        grid.addWidget(self.traffic, len(RESOURCE_NAMES), 0, 1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        for widget in (self.title, self.throughput, self.params_box, self.packing, self.error, latency_box,
                       resources_box):
            layout.addWidget(widget)
        layout.addStretch(1)
        selection.changed.connect(self.refresh)
        self._design = None
        self.refresh()

    def _build_editors(self) -> None:
        while self.params_form.rowCount():
            self.params_form.removeRow(0)
        self.editors = {}
        design = self.selection.design
        if design is None:
            return
        for p in design.params:
            if not p.tunable:
                continue
            edit = QLineEdit()
            rules = ", ".join(str(c) for c in p.constraints)
            edit.setToolTip(f"{p.role.replace('_', ' ')} of loop {p.loop}: {p.lower}..{p.upper}"
                            + (f", {rules}" if rules else ""))
            edit.textEdited.connect(lambda text, name=p.name: self.selection.set_value(name, text))
            self.params_form.addRow(p.name, edit)
            self.editors[p.name] = edit

    def refresh(self) -> None:
        s = self.selection
        if s.design is not self._design:
            self._design = s.design
            self._build_editors()
        self.title.setText(s.design.name if s.design else "no design selected")
        for name, edit in self.editors.items():
            if not edit.hasFocus() and edit.text() != str(s.values.get(name, "")):
                edit.setText(str(s.values.get(name, "")))
            broken = bool(s.error) and (f"{name}=" in s.error or f"{name}:" in s.error)
            edit.setStyleSheet(f"border: 1px solid {theme.ERROR};" if broken else "")
        self.error.setText(s.error)
        report = s.report
        if report is None:
            for widget in (self.latency, self.bottleneck, self.traffic, self.throughput, self.packing):
                widget.setText("")
            if s.busy and not s.error:
                self.latency.setText("evaluating ...")
            self.latency_bar.set_parts({})
            for bar in self.bars.values():
                bar.setValue(0)
                bar.setFormat("")
            return
        tunable = set(self.editors)
        packing = {k: v for k, v in report["params"].items() if k not in tunable}
        self.packing.setText("data packing (inferred): " + ", ".join(f"{k}={v}" for k, v in packing.items())
                             if packing else "")
        self.throughput.setText(f"{report['throughput_gops']:,.1f} GOP/s"
                                + ("" if report["fits"] else "  (does not fit)"))
        self.latency.setText(f"{report['latency_cycles']:,.0f} cycles = prologue {report['prologue']:,.0f} "
                             f"+ main {report['main']:,.0f} + epilogue {report['epilogue']:,.0f}")
        self.latency_bar.set_parts({k: report[k] for k in ("prologue", "main", "epilogue")})
        neck = report["bottleneck"]
        self.bottleneck.setText(f"bottleneck: <b>{neck}</b> ({report['modules'][neck]:,.0f} cycles)")
        budget = report["device"]["budget"]
        for name, bar in self.bars.items():
            used, cap = report[RESOURCE_KEYS[name]], budget[name]
            share = used / cap if cap else float(used > 0)
            bar.setValue(int(min(share, 1.0) * 1000))
            bar.setFormat(f"{used:,.0f} / {cap:,.0f}  ({share:.0%})")
            style = f"QProgressBar::chunk {{ background: {theme.ERROR if share > 1 else theme.ACCENT}; }}"
            if bar.styleSheet() != style:  # setting a style sheet re-polishes the bar: only on a change
                bar.setStyleSheet(style)
        traffic = ", ".join(f"{a} {n:,.0f}" for a, n in report["offchip_elements"].items())
        self.traffic.setText(f"off-chip traffic: {report['offchip_bytes'] / 2**20:,.1f} MiB ({traffic} elements)")
