"""QtTopologyPanel(selection): the topology view (app/views/qt_topology.py) with, beside it, what
explains and drives it: the colour picker, the legend, the heat scale, the Simulate button with its
status and an overview minimap (QtMinimap) - nothing is drawn over the scene. Simulate runs the
reduced problem through the Verification it shares with the Verify tab (app/models/verification.py:
a child process, progress, cancel); the load colours follow a simulation of the full problem only."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.models.design_selection import DesignSelection
from app.models.floorplan_session import FloorplanSession
from app.views import theme
from app.views.qt_topology import COLOUR_MODES, QtTopology
from app.models.verification import Verification

SIDE_WIDTH = 190  # the column right of the scene (colours, legend, heat scale, minimap)


class QtMinimap(QGraphicsView):
    """The whole scene small, with the main view's visible area outlined; a click centres it there."""

    def __init__(self, view: QtTopology, parent=None):
        super().__init__(view.scene(), parent)
        self.view = view
        self.setInteractive(False)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setBackgroundBrush(QColor(theme.BACKGROUND))
        self.setToolTip("overview: click to move the view there")
        view.viewChanged.connect(self.follow)

    def follow(self) -> None:
        rect = self.scene().sceneRect()
        if not rect.isEmpty():
            self.fitInView(rect, Qt.KeepAspectRatio)
        self.viewport().update()

    def visible_area(self) -> QRectF:
        return self.view.mapToScene(self.view.viewport().rect()).boundingRect()

    def drawForeground(self, painter, rect) -> None:
        area = self.visible_area().intersected(self.scene().sceneRect())
        if area.isEmpty() or area.contains(self.scene().sceneRect()):
            return
        pen = QPen(QColor(theme.ACCENT), 0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(QColor(79, 163, 255, 40))
        painter.drawRect(area)

    def mousePressEvent(self, event) -> None:
        self.view.centerOn(self.mapToScene(event.position().toPoint()))
        self.viewport().update()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.follow()


class HeatScale(QWidget):
    """The heat scale: a gradient from 0% to just below 100% of the bottleneck's cycles, and the
    bottleneck's own colour beside it (theme.heat_colour). Its height and its labels follow the font
    (presentation mode): "0%" starts at the ramp's left, "50%" is centred on its middle, "90%" ends at
    its 90% mark and "100%" at the right edge, so the last two never overlap."""

    RAMP = 10  # px

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Fixed)
        self.setToolTip("module and FIFO colour: the module's cycles as a share of the bottleneck's; "
                        "the bottleneck (100%) has a colour of its own")

    def sizeHint(self) -> QSize:
        return QSize(SIDE_WIDTH, 2 + self.RAMP + 2 + self.fontMetrics().height() + 2)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        width = self.width() - 8
        ramp = QRectF(4, 2, width * 0.82, self.RAMP)
        gradient = QLinearGradient(ramp.topLeft(), ramp.topRight())
        for stop, rgb in theme.HEAT_STOPS:
            gradient.setColorAt(stop, QColor(*rgb))
        painter.fillRect(ramp, gradient)
        top = QRectF(ramp.right() + 4, 2, width - ramp.width() - 4, self.RAMP)
        painter.fillRect(top, QColor(*theme.BOTTLENECK_RGB))
        painter.setPen(QColor(theme.MUTED))
        y, h, room = ramp.bottom() + 2, self.fontMetrics().height(), self.width()
        for text, x, align in (("0%", ramp.left(), Qt.AlignLeft),
                               ("50%", ramp.left() + ramp.width() * 0.5 - room / 2, Qt.AlignHCenter),
                               ("90%", ramp.left() + ramp.width() * 0.9 - room, Qt.AlignRight),
                               ("100%", top.right() - room, Qt.AlignRight)):
            painter.drawText(QRectF(x, y, room, h), align | Qt.AlignTop, text)


class QtTopologyPanel(QWidget):
    """The topology view with, to its right, the colour picker, the legend, the heat scale and the
    minimap: nothing is drawn over the scene."""

    def __init__(self, selection: DesignSelection, parent=None, *, verification: Verification | None = None):
        super().__init__(parent)
        self.view = QtTopology(selection)
        self.colours = QComboBox()
        self.colours.addItems(["colour by load", "colour by array", "colour by SLR"])
        self.colours.setToolTip("load: each module's share of the bottleneck's cycles (from the model); SLR: the "
                                "die each process is placed in by the floorplan (solved in the background)")
        self.floorplan = FloorplanSession(selection, self)
        self.view.follow_floorplan(self.floorplan)
        self.colours.currentIndexChanged.connect(lambda i: self._colour_mode(COLOUR_MODES[i]))
        self.heat = HeatScale()
        self.minimap = QtMinimap(self.view)
        self.minimap.setFixedHeight(150)
        self.selection = selection
        self.verification = verification or Verification(selection, self)
        self.simulate_button = QPushButton("Simulate")
        self.simulate_button.setToolTip("run the cycle-level simulator (engine/sim) on a reduced problem (a few "
                                        "tiles per loop) in a child process; the Verify tab runs the full problem, "
                                        "whose busy cycles then colour the load")
        self.simulate_button.clicked.connect(lambda: self.simulate())
        self.sim_status = QLabel()
        self.sim_status.setObjectName("muted")
        self.sim_status.setWordWrap(True)
        self.verification.changed.connect(self._show_simulation)
        side = QVBoxLayout()
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.colours)
        side.addWidget(self.view.legend)
        side.addWidget(self.heat)
        side.addWidget(self.simulate_button)
        side.addWidget(self.sim_status)
        side.addStretch(1)
        side.addWidget(self.minimap)
        column = QWidget()
        column.setLayout(side)
        # presentation mode at 1366x768: the legend and the minimap scroll, not clip. The scroll bar shows
        # only when the column is taller than its room, and the column follows the viewport's width: the
        # scroll bar's width when one shows, the whole width when none does (no empty strip beside it)
        self.side_scroll = side_scroll = QScrollArea()
        side_scroll.setWidget(column)
        side_scroll.setWidgetResizable(True)
        side_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        side_scroll.setFrameShape(QScrollArea.NoFrame)
        side_scroll.setFixedWidth(SIDE_WIDTH + side_scroll.verticalScrollBar().sizeHint().width())
        column.setMinimumWidth(SIDE_WIDTH)
        self.view.title.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # a long id never widens it
        left = QVBoxLayout()
        left.setContentsMargins(6, 4, 0, 0)
        left.addWidget(self.view.title)
        left.addWidget(self.view, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(left, 1)
        layout.addWidget(side_scroll)

    def simulate(self, full: bool = False) -> bool:
        """Simulate the configuration shown, the reduced problem unless `full` (False: nothing valid to
        simulate, or a verification is running)."""
        return self.verification.start("simulate", full)

    def _show_simulation(self) -> None:
        v = self.verification
        running = v.running is not None and v.running.kind == "simulate"
        self.simulate_button.setEnabled(v.running is None)
        error = v.error.get("simulate", "")
        if running:
            text = f"simulating {v.running.design_id} (about {v.running.seconds:,.0f} s; Verify tab: progress, cancel)"
        elif error:
            text = f"<span style='color:{theme.ERROR}'>{error}</span>"
        else:
            text = v.outcome.get("simulate", "")
        if self.sim_status.text() != text:
            self.sim_status.setText(text)

    def shutdown(self) -> None:
        self.verification.shutdown()
        self.floorplan.shutdown()

    def _colour_mode(self, mode: str) -> None:
        self.view.set_colour_mode(mode)
        self.heat.setVisible(mode == "load")
        self.floorplan.want_floorplan(mode == "SLR")
