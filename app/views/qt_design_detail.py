"""QtDesignDetail(selection): the selected design's parameters as spin boxes that step through the
legal values (legal_values: divisors, multiples, powers of two) with their bounds and rules shown,
typed values validated live (the broken constraint shown in place; the last valid numbers stay,
greyed), undo / redo of parameter edits (`undo_stack`), predicted latency split into prologue / main
/ epilogue (with its legend) and the three longest module terms, DSP / BRAM18K / URAM / LUT / FF as
bars against the usable budget (the device's usable share, said so), off-chip traffic and
throughput.

Selecting another design must not stall the window: the parameter rows are made once and reused
(relabelled, re-ranged, the extra ones hidden), not rebuilt per design, and a refresh is painted
once at its end (QProgressBar.setValue repaints synchronously otherwise)."""
from __future__ import annotations

import bisect
from collections.abc import Sequence

from PySide6.QtGui import QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.models.design_selection import DesignSelection
from app.models.legal_values import describe_rules, legal_values
from app.views import theme
from app.views.qt_bottleneck import PhaseBar, legend_html
from engine.models.device import RESOURCE_NAMES

RESOURCE_KEYS = {"DSP": "dsp", "BRAM18K": "bram18k", "URAM": "uram", "LUT": "lut", "FF": "ff"}


class LegalSpinBox(QSpinBox):
    """A parameter's spin box: the arrows and Page Up/Down step to the next legal value given the
    other parameters; any number in the bounds can still be typed (and is validated)."""

    def __init__(self, selection: DesignSelection, name: str, parent=None):
        super().__init__(parent)
        self.selection, self.name = selection, name
        self.setKeyboardTracking(False)  # a typed number counts when confirmed, not per digit
        self.setAccelerated(True)
        self._legal: tuple = (None, [])  # (design and values, their legal values): asked for on every paint

    def legal(self) -> Sequence[int]:
        s = self.selection
        if s.design is None or not any(p.name == self.name and p.tunable for p in s.design.params):
            return []  # a reused row not (yet) given one of this design's parameters
        key = (s.design.id, self.name, tuple(sorted(s.values.items())))
        if self._legal[0] != key:
            self._legal = (key, legal_values(s.design, self.name, s.values))
        return self._legal[1]

    def stepBy(self, steps: int) -> None:
        legal = self.legal()
        if not legal:
            return
        v = self.value()
        if steps > 0:  # the steps-th legal value above v (bisect: legal may be a huge range)
            first_above = bisect.bisect_right(legal, v)
            target = legal[min(first_above + steps, len(legal)) - 1]
        else:
            first_not_below = bisect.bisect_left(legal, v)
            target = legal[max(first_not_below + steps, 0)] if first_not_below else legal[0]
        self.setValue(target)

    def stepEnabled(self):
        legal = self.legal()
        flags = QSpinBox.StepNone
        if legal and self.value() > legal[0]:
            flags |= QSpinBox.StepDownEnabled
        if legal and self.value() < legal[-1]:
            flags |= QSpinBox.StepUpEnabled
        return flags


class SetParameter(QUndoCommand):
    def __init__(self, selection: DesignSelection, name: str, old: int, new: int):
        super().__init__(f"{name} {old} -> {new}")
        self.selection, self.name, self.old, self.new = selection, name, old, new

    def redo(self) -> None:
        self.selection.set_value(self.name, str(self.new))

    def undo(self) -> None:
        self.selection.set_value(self.name, str(self.old))


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
        self.params_box.setToolTip("the arrows and Page Up / Page Down step through the legal values")
        self.params_form = QFormLayout(self.params_box)
        self.editors: dict[str, LegalSpinBox] = {}
        self._rows: list[tuple[QLabel, LegalSpinBox, QLabel]] = []  # made once, reused by every design
        self._row_visible: dict[int, bool] = {}
        self.undo_stack = QUndoStack(self)
        self.packing = QLabel()
        self.packing.setObjectName("muted")
        self.packing.setWordWrap(True)
        self.error = QLabel()
        self.error.setObjectName("error")
        self.error.setWordWrap(True)
        self.clock_estimate = QLabel()  # both clock estimates and their limits (follow_floorplan)
        self.clock_estimate.setWordWrap(True)
        self.clock_estimate.setToolTip("engine/floorplan/clock.py: a rule fitted to published implementation "
                                       "results (AutoSA's plain and AutoBridge-floorplanned builds); a model, "
                                       "not Vivado")
        self._floorplan = None

        latency_box = QGroupBox("predicted latency")
        self.latency = QLabel()
        self.latency.setWordWrap(True)
        self.latency_bar = PhaseBar(legend=False)
        self.phase_legend = QLabel()
        self.phase_legend.setWordWrap(True)
        self.bottleneck = QLabel()
        self.bottleneck.setWordWrap(True)
        lat = QVBoxLayout(latency_box)
        lat.addWidget(self.latency)
        lat.addWidget(self.latency_bar)
        lat.addWidget(self.phase_legend)
        lat.addWidget(self.bottleneck)

        self.resources_box = resources_box = QGroupBox("resources")
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
        self.latency_box = latency_box
        for widget in (self.title, self.throughput, self.clock_estimate, self.params_box, self.packing, self.error,
                       latency_box, resources_box):
            layout.addWidget(widget)
        layout.addStretch(1)
        selection.changed.connect(self.refresh)
        self._design = None
        self.refresh()

    def _row(self, k: int) -> tuple[QLabel, LegalSpinBox, QLabel]:
        while len(self._rows) <= k:
            name, edit, rule = QLabel(), LegalSpinBox(self.selection, ""), QLabel()
            edit.valueChanged.connect(lambda value, e=edit: self._edited(e.name, value))
            rule.setObjectName("muted")
            rule.setWordWrap(True)
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            row.addWidget(rule, 1)
            self.params_form.addRow(name, row)
            self._rows.append((name, edit, rule))
            self._row_visible[len(self._rows) - 1] = True
        return self._rows[k]

    def _build_editors(self) -> None:
        """The design's tunable parameters in the reused rows; rows beyond them hidden."""
        self.editors = {}
        self.undo_stack.clear()  # the edits were the previous design's
        design = self.selection.design
        self.params_box.setEnabled(design is not None)
        if design is None:  # rows stay as they are (hiding them now, to show them again at the next
            return          # selection, costs a polish and a layout per row)
        tunable = [p for p in design.params if p.tunable]
        for k, p in enumerate(tunable):
            label, edit, rule = self._row(k)
            edit.blockSignals(True)
            edit.name, edit._legal = p.name, (None, [])
            edit.setRange(p.lower, p.upper)
            value = self.selection.values.get(p.name)
            if value is not None and p.lower <= value <= p.upper:
                edit.setValue(value)
            edit.blockSignals(False)
            rules = describe_rules(design, p.name)
            edit.setToolTip(f"{p.role.replace('_', ' ')} of loop {p.loop}: {rules}")
            label.setText(p.name)
            rule.setText(rules)
            self.editors[p.name] = edit
        for k in range(len(self._rows)):  # only rows that change: showing a row polishes and relays it out
            visible = k < len(tunable)
            if self._row_visible.get(k) != visible:
                self.params_form.setRowVisible(k, visible)
                self._row_visible[k] = visible

    def _edited(self, name: str, value: int) -> None:
        old = self.selection.values.get(name)
        if old is None or old == value:
            return
        self.undo_stack.push(SetParameter(self.selection, name, old, value))

    def follow_floorplan(self, floorplan) -> None:
        """Show the clock estimates of this FloorplanSession for the configuration shown."""
        self._floorplan = floorplan
        floorplan.changed.connect(self._show_clock)

    def _show_clock(self) -> None:
        f, report = self._floorplan, self.selection.report
        if f is None or report is None or not f.is_current():
            text = f"<span style='color:{theme.ERROR}'>clock estimate: {f.error}</span>" if f and f.error else \
                "estimating the reachable clock ..."
            self.clock_estimate.setText(text if report is not None and f else "")
            return
        e, gops, clock = f.estimate, report["throughput_gops"], report["device"]["clock_mhz"]
        lines = [f"floorplanned <b>{e.floorplanned_mhz:.0f} MHz</b> ({gops * e.floorplanned_mhz / clock:,.1f} GOP/s): "
                 f"{e.floorplanned_reason}",
                 f"plain build <b>{e.unfloorplanned_mhz:.0f} MHz</b> ({gops * e.unfloorplanned_mhz / clock:,.1f} "
                 f"GOP/s): {e.unfloorplanned_reason}"]
        how = "floorplan solved" if f.solved else "no floorplan solved: colour the topology by SLR to solve one"
        self.clock_estimate.setText(f"estimated clock ({how}; a model, not Vivado):<br>" + "<br>".join(lines))

    def _numbers(self) -> list[QWidget]:
        return [self.throughput, self.packing, self.latency_box, self.resources_box]

    def refresh(self) -> None:
        self.setUpdatesEnabled(False)  # one repaint at the end, not one per bar and label
        try:
            self._refresh()
        finally:
            self.setUpdatesEnabled(True)

    def _refresh(self) -> None:
        s = self.selection
        if s.design is not self._design:
            self._design = s.design
            self._build_editors()
        self.title.setText(f"{s.design.id}: {s.design.name}" if s.design else "no design selected")
        for name, edit in self.editors.items():
            value = s.values.get(name)
            if value is not None and edit.value() != value and edit.minimum() <= value <= edit.maximum():
                edit.blockSignals(True)
                edit.setValue(value)
                edit.blockSignals(False)
            broken = bool(s.error) and (f"{name}=" in s.error or f"{name}:" in s.error)
            edit.setStyleSheet(f"border: 1px solid {theme.ERROR};" if broken else "")
        self.error.setText(s.error)
        report = s.report
        if report is None:
            if s.error and self.throughput.text():
                for widget in self._numbers():  # the last valid configuration's numbers, greyed
                    widget.setEnabled(False)
                return
            for widget in (self.latency, self.bottleneck, self.traffic, self.throughput, self.packing,
                           self.phase_legend):
                widget.setText("")
            if s.busy and not s.error:
                self.latency.setText("evaluating ...")
            self.latency_bar.set_parts({}, 300.0)
            for bar in self.bars.values():
                bar.setValue(0)
                bar.setFormat("")
            return
        for widget in self._numbers():
            widget.setEnabled(True)
        self._show_clock()
        tunable = set(self.editors)
        packing = {k: v for k, v in report["params"].items() if k not in tunable}
        self.packing.setText("data packing (inferred): " + ", ".join(f"{k}={v}" for k, v in packing.items())
                             if packing else "")
        clock = report["device"]["clock_mhz"]
        self.throughput.setText(f"{report['throughput_gops']:,.1f} GOP/s"
                                + ("" if report["fits"] else "  (does not fit)"))
        self.latency.setText(f"{report['latency_cycles']:,.0f} cycles = {report['latency_cycles'] / clock:,.1f} µs "
                             f"at {clock:g} MHz")
        phases = {k: report[k] for k in ("prologue", "main", "epilogue")}
        self.latency_bar.set_parts(phases, clock)
        self.phase_legend.setText(legend_html(phases, clock))
        neck = report["bottleneck"]
        ranked = sorted(report["modules"].items(), key=lambda kv: -kv[1])[:3]
        top = report["modules"][neck] or 1.0
        self.bottleneck.setText(f"bottleneck: <b>{neck}</b> ({report['modules'][neck]:,.0f} cycles); "
                                + ", ".join(f"{n} {c / top:.0%}" for n, c in ranked[1:])
                                + " of it (Bottleneck tab: every module)")
        device = report["device"]
        # a short title: a group box is at least as wide as its title (presentation mode at 1366x768)
        self.resources_box.setTitle(f"usable budget ({device['usable_ratio']:.0%})")
        self.resources_box.setToolTip(f"bars divide by the usable budget: {device['usable_ratio']:.0%} of the "
                                      f"{device['name']}'s resources")
        budget = device["budget"]
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
        # wrapped labels changed height: lay out again now (inside the scroll area the layout was not
        # always redone, and the latency box's lines overlapped)
        self.layout().invalidate()
        self.layout().activate()
