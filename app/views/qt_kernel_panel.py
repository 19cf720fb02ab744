"""QtKernelPanel(session): the kernel editor with a picker for the bundled kernels, the `#define`
sizes in a small table under the editor (collapsible: the editor keeps the dock's width) with a
picker for the kernel's named size presets, data type and device selectors, the device bar's kernel
clock (MHz: every throughput figure of the window is at it), "SIMD on space loops" (AutoSA's
--simd-touch-space: toggling it compiles again) and a Compile button; compile errors appear in place
(a marker on the line and the message under the editor)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.models.kernel_session import DATA_TYPES, DEVICES, KernelSession
from app.views.qt_code_editor import QtCodeEditor
from engine.models.device import load_device
from engine.resources import bundled_kernels, kernel_presets

AS_WRITTEN = "sizes as written"


class SizesTable(QTableWidget):
    """The sizes table, as tall as its header and rows in the current font (`fit`: after a compile and
    after a font change) and never below its header and one row, scrolling the rest."""

    def fit(self) -> None:
        self.resizeRowsToContents()  # rows as tall as the current font (presentation mode: larger)
        header = self.horizontalHeader().sizeHint().height() + 2 * self.frameWidth()
        rows = [self.rowHeight(r) for r in range(self.rowCount())]
        self.setMaximumHeight(header + sum(rows))
        self.setMinimumHeight(header + min(rows[:1] or [0]))


class QtKernelPanel(QWidget):
    openRequested = Signal(str)  # a bundled kernel's path picked in the list

    def __init__(self, session: KernelSession, parent=None):
        super().__init__(parent)
        self.session = session
        self.picker = QComboBox()
        self.kernels = bundled_kernels()
        self.picker.addItems(list(self.kernels))
        self.picker.setToolTip("bundled kernels")
        self.data_type = QComboBox()
        self.data_type.addItems(DATA_TYPES)
        self.device = QComboBox()
        self.device.addItems(DEVICES)
        self.clock = QDoubleSpinBox(decimals=0, suffix=" MHz")
        self.clock.setToolTip("the kernel clock every throughput figure of the window is at (the models' DRAM "
                              "pace too); the device file's clock by default, at most its clock_mhz_max")
        self.clock.setKeyboardTracking(False)  # one evaluation per value, not per digit typed
        self.touch_space = QCheckBox("SIMD on space loops")
        self.touch_space.setToolTip("AutoSA's --simd-touch-space: also list, for each dataflow with a parallel "
                                    "space loop, the design with SIMD on that loop (id ..__simd-<loop>, each lane "
                                    "its own output); off by default, as in AutoSA. Toggling it compiles again")
        self.compile_button = QPushButton("Compile")
        self.compile_button.setObjectName("primary")
        self.compile_button.setShortcut("Ctrl+Return")
        self.compile_button.setToolTip("compile the edited kernel (Ctrl+Return)")
        self.preset = QComboBox()
        self.preset.setToolTip("named problem sizes of a bundled kernel (resources/kernels/presets.json)")
        top = QHBoxLayout()
        for label, widget in (("kernel", self.picker), ("type", self.data_type), ("device", self.device)):
            caption = QLabel(label)
            caption.setObjectName("muted")
            top.addWidget(caption)
            top.addWidget(widget)
        top.addStretch(1)
        self.sizes_toggle = QToolButton()
        self.sizes_toggle.setText("sizes")
        self.sizes_toggle.setCheckable(True)
        self.sizes_toggle.setChecked(True)
        self.sizes_toggle.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.sizes_toggle.setArrowType(Qt.DownArrow)
        self.sizes_toggle.setAutoRaise(True)
        self.sizes_toggle.setToolTip("show or hide the sizes table under the editor")
        second = QHBoxLayout()
        second.addWidget(self.sizes_toggle)
        second.addWidget(self.preset, 1)
        second.addWidget(self.clock)
        second.addWidget(self.compile_button)

        self.sizes = SizesTable(0, 2)
        self.sizes.setHorizontalHeaderLabels(("size", "value"))
        self.sizes.verticalHeader().setVisible(False)
        self.sizes.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.editor = QtCodeEditor()
        self.message = QLabel()
        self.message.setObjectName("error")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        # the sizes under the editor, not beside it: the editor has the dock's whole width
        split = QSplitter(Qt.Vertical)
        split.addWidget(self.editor)
        split.addWidget(self.sizes)
        split.setStretchFactor(0, 1)
        split.setCollapsible(0, False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addLayout(second)
        layout.addWidget(self.touch_space)  # a row of its own: the two above fill the dock's width at 1366x768
        layout.addWidget(split, 1)
        layout.addWidget(self.message)

        self._filling = False
        self.picker.activated.connect(lambda i: self.openRequested.emit(str(self.kernels[self.picker.itemText(i)])))
        self.data_type.activated.connect(lambda _: self._changed_type())
        self.device.activated.connect(lambda _: session.set_device(self.device.currentText()))
        self.clock.valueChanged.connect(self._clock_changed)
        self.touch_space.toggled.connect(self._touch_space_toggled)
        self.compile_button.clicked.connect(self.compile)
        self.sizes_toggle.toggled.connect(self.show_sizes)
        self.sizes.itemChanged.connect(self._size_edited)
        self.preset.activated.connect(lambda _: self._preset_chosen())
        session.sourceChanged.connect(self._show_source)
        session.compiled.connect(self._show_result)
        self._show_source()
        self._show_result()

    def show_sizes(self, shown: bool) -> None:
        """Show or hide (collapse) the sizes table under the editor."""
        self.sizes_toggle.setChecked(shown)
        self.sizes_toggle.setArrowType(Qt.DownArrow if shown else Qt.RightArrow)
        self.sizes.setVisible(shown)

    def compile(self) -> None:
        self.session.set_text(self.editor.toPlainText())
        self.session.compile()

    def _preset_chosen(self) -> None:
        name = self.preset.currentText()
        presets = kernel_presets(self.session.path) if self.session.path else {}
        self.session.set_text(self.editor.toPlainText())
        self.session.set_sizes(presets.get(name, {}))

    def _fill_presets(self) -> None:
        presets = kernel_presets(self.session.path) if self.session.path else {}
        self.preset.blockSignals(True)
        self.preset.clear()
        self.preset.addItem(AS_WRITTEN)
        for name, sizes in presets.items():
            self.preset.addItem(name)
            self.preset.setItemData(self.preset.count() - 1, ", ".join(f"{k}={v}" for k, v in sizes.items()),
                                    Qt.ToolTipRole)
        current = next((n for n, sizes in presets.items() if sizes == self.session.overrides), None)
        self.preset.setCurrentText(current or AS_WRITTEN)
        self.preset.setEnabled(bool(presets))
        self.preset.blockSignals(False)

    def _touch_space_toggled(self, on: bool) -> None:
        self.session.set_text(self.editor.toPlainText())
        self.session.set_simd_touch_space(on)

    def _changed_type(self) -> None:
        self.session.set_text(self.editor.toPlainText())
        self.session.set_data_type(self.data_type.currentText())

    def _size_edited(self, item: QTableWidgetItem) -> None:
        if self._filling or item.column() != 1:
            return
        name = self.sizes.item(item.row(), 0).text()
        try:
            value = int(item.text().strip())
            if value < 1:
                raise ValueError
        except ValueError:
            self.message.setText(f"size {name}: '{item.text()}' is not a positive whole number")
            return
        self.session.set_text(self.editor.toPlainText())
        self.session.set_size(name, value)

    def _show_source(self) -> None:
        s = self.session
        if s.path is not None and s.path.stem in self.kernels and self.kernels[s.path.stem] == s.path:
            self.picker.setCurrentText(s.path.stem)
        elif self.picker.currentIndex() != -1 or self.picker.placeholderText() != (s.path.name if s.path else ""):
            self.picker.setPlaceholderText(s.path.name if s.path else "")  # the user's file, not a bundled name
            self.picker.setCurrentIndex(-1)
        if self.editor.toPlainText() != s.text:
            self.editor.setPlainText(s.text)
        self.data_type.setEnabled(s.has_type_macro)
        self.data_type.setCurrentText(s.data_type or DATA_TYPES[0])
        self.device.setCurrentText(s.device)
        self.touch_space.blockSignals(True)
        self.touch_space.setChecked(s.simd_touch_space)
        self.touch_space.blockSignals(False)
        self._fill_presets()

    def _clock_changed(self, mhz: float) -> None:
        if not self._filling:
            self.session.set_clock(mhz)

    def _show_clock(self) -> None:
        s = self.session
        device = load_device(s.device)
        self._filling = True
        self.clock.setRange(1, device.clock_mhz_max or device.clock_mhz)
        self.clock.setValue(s.device_clock())
        self._filling = False

    def _show_result(self) -> None:
        s = self.session
        self._show_clock()
        self.editor.set_error_line(s.error_line, s.error)
        self.message.setText(s.error)
        self._filling = True
        sizes = s.sizes()
        self.sizes.setRowCount(len(sizes))
        for row, (name, value) in enumerate(sizes.items()):
            key = QTableWidgetItem(name)
            key.setFlags(Qt.ItemIsEnabled)
            self.sizes.setItem(row, 0, key)
            self.sizes.setItem(row, 1, QTableWidgetItem(str(value)))
        self._filling = False
        self.sizes.fit()  # no taller than its rows: the rest of the height is the editor's
