"""The application's look: a dark or a light Fusion palette (by default the one the system uses),
one stylesheet, array colours and pyqtgraph defaults shared by every view. Disabled widgets get
their own muted text and flat backgrounds, so they read as disabled. The colours below are read
when views are made: apply() picks the theme before the window is built. pyqtgraph (a third of a
second to import) is not imported here: configure_plots() gives it the theme's colours before the
first plot is made, which the window does after its first paint. apply() may be called again on a
running window (another theme, presentation mode's `scale` of every font); app/views/window_look.py
then restyles what keeps colours of its own (plots, the topology scene, the editor's font)."""
from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

DARK = {"BACKGROUND": "#1e2127", "PANEL": "#262a31", "TEXT": "#d7dae0", "MUTED": "#8b929e", "BORDER": "#3a3f4b",
        "DISABLED": "#5f6570", "ALTERNATE": "#2c313a"}
LIGHT = {"BACKGROUND": "#f4f5f7", "PANEL": "#ffffff", "TEXT": "#1f2328", "MUTED": "#5f6670", "BORDER": "#c9ced6",
         "DISABLED": "#a3a9b2", "ALTERNATE": "#eef0f3"}
BACKGROUND = DARK["BACKGROUND"]
PANEL = DARK["PANEL"]
TEXT = DARK["TEXT"]
MUTED = DARK["MUTED"]
BORDER = DARK["BORDER"]
DISABLED = DARK["DISABLED"]
ALTERNATE = DARK["ALTERNATE"]
ACCENT = "#4fa3ff"
ERROR = "#ff6b6b"
OK = "#6bd68a"
# one colour per array (in the order the descriptor lists them), PEs and DRAM apart
ARRAY_COLOURS = ("#4fa3ff", "#ffb454", "#c792ea", "#6bd68a", "#ff6b6b", "#56d4dd", "#e6d06b")
PE_COLOUR = "#5c6370"
SLR_COLOURS = ("#4fa3ff", "#ffb454", "#6bd68a", "#c792ea", "#56d4dd", "#e6d06b")  # one per die of the device
DRAM_COLOUR = "#a0a7b4"
SCALE = 1.0  # every font's size over the normal one (presentation mode: larger)
MODE = "dark"  # the theme applied (dark or light)
_BASE_FONT: QFont | None = None  # the application's font before any scaling

def stylesheet() -> str:
    return f"""
QMainWindow, QDialog {{ background: {BACKGROUND}; }}
QDockWidget::title {{ background: {PANEL}; padding: 4px 8px; color: {TEXT}; }}
QGroupBox {{ border: 1px solid {BORDER}; border-radius: 4px; margin-top: 14px; padding-top: 6px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 8px; color: {MUTED}; }}
QGroupBox:disabled {{ color: {DISABLED}; }}
QLabel#error {{ color: {ERROR}; }}
QLabel#muted {{ color: {MUTED}; }}
QLabel:disabled, QLabel#muted:disabled {{ color: {DISABLED}; }}
QLabel#headline {{ font-size: {round(15 * SCALE)}px; font-weight: 600; }}
QTreeView, QTableView, QPlainTextEdit {{ background: {PANEL}; border: 1px solid {BORDER}; }}
QTreeView:disabled, QTableView:disabled {{ color: {DISABLED}; }}
QPushButton {{ padding: 4px 12px; }}
QPushButton:disabled {{ color: {DISABLED}; }}
QPushButton#primary {{ background: {ACCENT}; color: #0b1220; font-weight: 600; border-radius: 3px; }}
QPushButton#primary:disabled {{ background: {BORDER}; color: {DISABLED}; }}
QProgressBar {{ border: 1px solid {BORDER}; border-radius: 3px; text-align: center; background: {PANEL}; }}
QProgressBar::chunk {{ background: {ACCENT}; }}
QProgressBar:disabled {{ color: {DISABLED}; }}
"""


def system_is_light() -> bool:
    hints = QGuiApplication.styleHints()
    return hasattr(hints, "colorScheme") and hints.colorScheme() == Qt.ColorScheme.Light




# the heat scale of a module's share of the bottleneck's cycles: a perceptual scale (viridis, from
# its 0.1 point so the coolest modules still show on the dark background) up to just below 100%,
# and the bottleneck (and whatever is within half a percent of it) a colour of its own, so that
# 90% and 100% never look alike
HEAT_STOPS = ((0.0, (72, 40, 120)), (0.25, (59, 82, 139)), (0.5, (33, 145, 140)), (0.75, (94, 201, 98)),
              (1.0, (253, 231, 37)))
BOTTLENECK_SHARE = 0.995  # from this share on, a module is drawn as the bottleneck
BOTTLENECK_RGB = (255, 64, 112)


def array_colour(index: int) -> QColor:
    return QColor(ARRAY_COLOURS[index % len(ARRAY_COLOURS)])


def heat_colour(share: float) -> QColor:
    share = min(1.0, max(0.0, float(share)))
    if share >= BOTTLENECK_SHARE:
        return QColor(*BOTTLENECK_RGB)
    for (a, ca), (b, cb) in zip(HEAT_STOPS, HEAT_STOPS[1:]):
        if share <= b:
            t = (share - a) / (b - a)
            return QColor(*(round(x + (y - x) * t) for x, y in zip(ca, cb)))
    return QColor(*HEAT_STOPS[-1][1])


def scaled_font(font: QFont, scale: float | None = None) -> QFont:
    """`font` at `scale` (the current SCALE by default) times its size."""
    out = QFont(font)
    if font.pointSizeF() > 0:
        out.setPointSizeF(font.pointSizeF() * (SCALE if scale is None else scale))
    elif font.pixelSize() > 0:
        out.setPixelSize(round(font.pixelSize() * (SCALE if scale is None else scale)))
    return out


def apply(app: QApplication, mode: str = "dark", *, scale: float | None = None) -> str:
    """`mode`: dark, light or system (the system's colour scheme); `scale`: every font's size over
    the normal one (None: keep the current one); returns the theme applied."""
    global _BASE_FONT
    chosen = ("light" if system_is_light() else "dark") if mode == "system" else mode
    colours = LIGHT if chosen == "light" else DARK
    globals().update(colours, MODE=chosen, SCALE=SCALE if scale is None else float(scale))
    if _BASE_FONT is None:
        _BASE_FONT = QFont(app.font())
    app.setFont(scaled_font(_BASE_FONT))
    app.setStyle("Fusion")
    palette = QPalette()
    for role, colour in ((QPalette.Window, BACKGROUND), (QPalette.WindowText, TEXT), (QPalette.Base, PANEL),
                         (QPalette.AlternateBase, ALTERNATE), (QPalette.Text, TEXT), (QPalette.Button, PANEL),
                         (QPalette.ButtonText, TEXT), (QPalette.Highlight, ACCENT),
                         (QPalette.HighlightedText, "#0b1220"), (QPalette.ToolTipBase, PANEL),
                         (QPalette.ToolTipText, TEXT), (QPalette.PlaceholderText, MUTED)):
        palette.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        palette.setColor(QPalette.Disabled, role, QColor(DISABLED))
    palette.setColor(QPalette.Disabled, QPalette.Button, QColor(BACKGROUND))
    palette.setColor(QPalette.Disabled, QPalette.Base, QColor(BACKGROUND))
    app.setPalette(palette)
    app.setStyleSheet(stylesheet())
    if "pyqtgraph" in sys.modules:  # already imported (a test, a script): its plots to come get the colours now
        configure_plots()
    return chosen


def configure_plots() -> None:
    """pyqtgraph's defaults from the theme applied: called before making plots (imports pyqtgraph)."""
    import pyqtgraph as pg  # deferred: imported when the first plot is made, after the window's first paint

    pg.setConfigOptions(antialias=True, background=BACKGROUND, foreground=TEXT)
