"""`systolic-studio` / `python -m app`: opens the explorer on the bundled matrix-multiply kernel.

For now the window shows the kernel's legal designs; the full explorer (editor, search, topology,
export) is the "Desktop explorer" issue.
"""
from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QVBoxLayout, QWidget

from app.models.design_table_model import DesignTableModel
from app.views.qt_design_table import QtDesignTable
from engine.compiler.design_space import compile_kernel
from engine.errors import EngineError
from engine.resources import DEFAULT_KERNEL


class MainWindow(QMainWindow):
    def __init__(self, kernel_path=DEFAULT_KERNEL):
        super().__init__()
        self.setWindowTitle("Systolic Studio")
        self.designs = DesignTableModel()
        self.status = QLabel()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addWidget(self.status)
        layout.addWidget(QtDesignTable(self.designs))
        self.setCentralWidget(body)
        self.open_kernel(kernel_path)

    def open_kernel(self, path) -> None:
        try:
            space = compile_kernel(path)
        except EngineError as exc:
            self.status.setText(str(exc))
            self.designs.set_designs(())
            return
        self.status.setText(f"{space.kernel.name}: {len(space.designs)} legal systolic arrays")
        self.designs.set_designs(space.designs)


def main(argv: list[str] | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv if argv is None else argv)
    window = MainWindow()
    window.resize(900, 600)
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
