"""QtKernelPanel(session): the kernel editor with a picker for the bundled kernels, the `#define`
sizes in a small table, data type and device selectors and a Compile button; compile errors appear
in place (a marker on the line and the message under the editor)."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.models.kernel_session import DATA_TYPES, DEVICES, KernelSession
from app.views.qt_code_editor import QtCodeEditor
from engine.resources import bundled_kernels


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
        self.compile_button = QPushButton("Compile")
        self.compile_button.setObjectName("primary")
        self.compile_button.setShortcut("Ctrl+Return")
        self.compile_button.setToolTip("compile the edited kernel (Ctrl+Return)")
        top = QHBoxLayout()
        for label, widget in (("kernel", self.picker), ("type", self.data_type), ("device", self.device)):
            caption = QLabel(label)
            caption.setObjectName("muted")
            top.addWidget(caption)
            top.addWidget(widget)
        top.addStretch(1)
        top.addWidget(self.compile_button)

        self.sizes = QTableWidget(0, 2)
        self.sizes.setHorizontalHeaderLabels(("size", "value"))
        self.sizes.verticalHeader().setVisible(False)
        self.sizes.horizontalHeader().setSectionResizeMode(QHeaderView.Stretch)
        self.sizes.setMaximumWidth(200)
        self.editor = QtCodeEditor()
        self.message = QLabel()
        self.message.setObjectName("error")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextSelectableByMouse)
        split = QSplitter()
        split.addWidget(self.editor)
        split.addWidget(self.sizes)
        split.setStretchFactor(0, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(split, 1)
        layout.addWidget(self.message)

        self._filling = False
        self.picker.activated.connect(lambda i: self.openRequested.emit(str(self.kernels[self.picker.itemText(i)])))
        self.data_type.activated.connect(lambda _: self._changed_type())
        self.device.activated.connect(lambda _: session.set_device(self.device.currentText()))
        self.compile_button.clicked.connect(self.compile)
        self.sizes.itemChanged.connect(self._size_edited)
        session.sourceChanged.connect(self._show_source)
        session.compiled.connect(self._show_result)
        self._show_source()
        self._show_result()

    def compile(self) -> None:
        self.session.set_text(self.editor.toPlainText())
        self.session.compile()

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
        if self.editor.toPlainText() != s.text:
            self.editor.setPlainText(s.text)
        self.data_type.setEnabled(s.has_type_macro)
        self.data_type.setCurrentText(s.data_type or DATA_TYPES[0])
        self.device.setCurrentText(s.device)

    def _show_result(self) -> None:
        s = self.session
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
