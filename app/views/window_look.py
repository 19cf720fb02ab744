"""WindowLook(window): the theme and presentation mode of a running window -> its palette, style
sheet and fonts (theme.apply) and everything that keeps colours or fonts of its own: pyqtgraph
plots (background, axes and their tick fonts), the topology scenes (background, labels: drawn
again), the kernel editor's fixed-width font. A theme chosen in the View menu applies at once and is
remembered; presentation mode (F5) makes every font PRESENTATION_SCALE times larger, F5 again
restores them."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import QApplication, QGraphicsView

from app.views import theme

if TYPE_CHECKING:
    from app.main_window import MainWindow

PRESENTATION_SCALE = 1.4


class WindowLook:
    def __init__(self, window: MainWindow):
        self.window = window

    @property
    def mode(self) -> str:
        """The theme asked for: system, dark or light (remembered in the settings)."""
        return str(self.window.settings.value("theme", "system"))

    @property
    def presenting(self) -> bool:
        return theme.SCALE > 1.0

    def set_theme(self, mode: str) -> None:
        self.window.settings.setValue("theme", mode)
        self.apply(mode, theme.SCALE)

    def toggle_presentation(self) -> None:
        self.apply(self.mode, 1.0 if self.presenting else PRESENTATION_SCALE)

    def apply(self, mode: str, scale: float) -> None:
        theme.apply(QApplication.instance(), mode, scale=scale)
        self.restyle()

    def restyle(self) -> None:
        """What theme.apply does not reach: views that set their colours or fonts themselves."""
        from app.views.qt_topology import QtTopology  # noqa: the window imports it already

        w = self.window
        w.kernel_panel.editor.setFont(theme.scaled_font(QFontDatabase.systemFont(QFontDatabase.FixedFont)))
        w.kernel_panel.sizes.fit()  # its header and rows in the new font (else clipped: presentation mode)
        plots = sys.modules.get("pyqtgraph")
        for view in w.findChildren(QGraphicsView):
            if plots is not None and isinstance(view, plots.GraphicsView):
                _restyle_plot(plots, view)
            else:
                view.setBackgroundBrush(QColor(theme.BACKGROUND))
                if isinstance(view, QtTopology):
                    view.restyle()


def _restyle_plot(pg, view) -> None:
    view.setBackground(theme.BACKGROUND)
    font = theme.scaled_font(QApplication.font())
    for item in view.scene().items():
        if isinstance(item, pg.AxisItem):
            item.setPen(theme.TEXT)
            item.setTextPen(theme.TEXT)
            item.setStyle(tickFont=font)
