"""MainWindow: the explorer. Kernel editor and design tree on the left, the array topology with the
live search under it in the middle (beside it the Bottleneck, Compare, Pods, Network, Sweep and
Verify tabs), the selected design's detail on the right; File menu for kernels, projects (with
recent files), stored runs and the Vitis export (those actions: app/window_actions.py). Layout and
recent files are remembered with QSettings.

The window paints first with what a person sees at once (menus, kernel editor, design tree,
topology, design detail) and builds the parts that import pyqtgraph, numpy or the network engine
right after, one per turn of the event loop while the kernel compiles in its process (without
`background`, at once before the compile thread starts): the search session, the Proof dock, the
search panel with its plots, the Pods, Network and Sweep tabs. Reading one of them
(`search`, `proof`, `search_panel`, `points`, `pods`, `network`, `network_view`) before then
builds it at once; `sweep_view` is None until built."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QWidget,
)

from app.gc_pauses import freeze_after_young_collection
from app.models.compare_session import CompareSession
from app.models.design_focus import DesignFocus
from app.models.design_selection import DesignSelection
from app.models.design_tree_model import DesignTreeModel
from app.models.kernel_session import KernelSession
from app.models.verification import Verification
from app.views import theme
from app.views.qt_design_detail import QtDesignDetail
from app.views.qt_design_tree import QtDesignTree
from app.views.qt_kernel_panel import QtKernelPanel
from app.views.qt_bottleneck import QtBottleneck
from app.views.qt_compare import QtCompare
from app.views.qt_compile_status import QtCompileStatus
from app.views.qt_topology_panel import QtTopologyPanel
from app.views.qt_verify import QtVerify
from app.views.window_menus import WindowMenus
from app.window_actions import WindowActions
from app.workers.compile_process import CompileHost
from app.workers.model_pool import ModelPool
from app.workers.search_process import SearchRequest, start_search_host
from app.workers.selection_process import SelectionHost
from engine.errors import EngineError
from engine.resources import DEFAULT_KERNEL

if TYPE_CHECKING:  # pyqtgraph, numpy, the network engine: imported after the first paint (see _build_next_part)
    from app.models.design_points import DesignPoints
    from app.models.network_session import NetworkSession
    from app.models.search_session import SearchSession
    from app.views.qt_network import QtNetwork
    from app.views.qt_pods import QtPods
    from app.views.qt_proof import QtProof
    from app.views.qt_search_panel import QtSearchPanel
    from app.views.qt_sweep import QtSweep

class MainWindow(WindowActions, QMainWindow):
    messageShown = Signal(str)  # a problem reported to the user (also in a non-blocking message box)

    def __init__(self, kernel_path=DEFAULT_KERNEL, *, settings: QSettings | None = None, background: bool = True):
        """`background`: start the search process (its warm-up) now and build every design's model
        after each compile in the model pool; without it both happen only when needed."""
        super().__init__()
        self.background = background
        # the search process first of all: its warm-up (~3 s of CPU at nice +5) runs beside the first
        # paint and the compilation, so that a Start pressed as soon as the designs show samples at once
        self._search_host = start_search_host() if background else None
        self.setWindowTitle("Systolic Studio")
        self.settings = settings or QSettings("systolic-studio", "systolic-studio")
        self.project_path: Path | None = None
        self.last_message = ""
        self.session = KernelSession(self)
        self.session.asynchronous = True  # compiling CNN takes a second: off the GUI thread
        self.tree_model = DesignTreeModel(self)
        self.selection = DesignSelection(self)
        self.focus = DesignFocus(self.tree_model, self.selection, self)  # the configuration every panel shows
        self._search: SearchSession | None = None
        self.models = ModelPool(self.selection.cache, self)
        self.kernel_panel = QtKernelPanel(self.session)
        self.tree = QtDesignTree(self.tree_model)
        self.tree.follow(self.selection)
        self.compile_status = QtCompileStatus(self.session, lambda: bool(self.tree_model.design_ids()))
        self.statusBar().addWidget(self.compile_status, 1)  # hidden by a passing message, shown again after it
        self.model_status = QLabel()
        self.model_status.setObjectName("muted")
        self.statusBar().addPermanentWidget(self.model_status)
        self.verification = Verification(self.selection, self)  # simulator and C simulation: Verify tab, Simulate
        self.topology_panel = QtTopologyPanel(self.selection, verification=self.verification)
        self.topology = self.topology_panel.view
        self.bottleneck = QtBottleneck(self.selection)
        self.compare = CompareSession(self)
        self.compare_view = QtCompare(self.compare, self.selection)
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(self.topology_panel, "Topology")
        self.views.addTab(self.bottleneck, "Bottleneck")
        self.views.addTab(_scrolled(self.compare_view), "Compare")  # pins never raise the window's minimum size
        self._pods: QtPods | None = None
        self._pods_page = _scrolled(None)  # its QtPods is built after the first paint, or when shown
        self.views.addTab(self._pods_page, "Pods")
        self._network: NetworkSession | None = None  # whole networks (issue 15): a layer clicked selects it here
        self._network_view: QtNetwork | None = None
        self._network_page = _scrolled(None)
        self.views.addTab(self._network_page, "Network")
        self.sweep_view: QtSweep | None = None  # one parameter swept: built after the first paint, or when shown
        self._sweep_page = _scrolled(None)
        self.views.addTab(self._sweep_page, "Sweep")
        self.verify_view = QtVerify(self.verification)
        self.views.addTab(_scrolled(self.verify_view), "Verify")
        self.views.currentChanged.connect(self._tab_shown)
        self._points: DesignPoints | None = None
        self._search_panel: QtSearchPanel | None = None
        self.detail = QtDesignDetail(self.selection)
        self.detail.follow_floorplan(self.topology_panel.floorplan)
        self._proof: QtProof | None = None

        self._middle = QSplitter(Qt.Vertical)
        self._middle.addWidget(self.views)
        self._middle.addWidget(QWidget())  # the search panel's place until it is built
        self._middle.setSizes([560, 340])
        self.setCentralWidget(self._middle)
        scroll = QScrollArea()
        scroll.setWidget(self.detail)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the detail wraps to the dock's width
        self.docks = {}
        for name, widget, area in (("Kernel", self.kernel_panel, Qt.LeftDockWidgetArea),
                                   ("Designs", self.tree, Qt.LeftDockWidgetArea),
                                   ("Design detail", scroll, Qt.RightDockWidgetArea),
                                   ("Proof", QWidget(), Qt.RightDockWidgetArea)):  # QtProof: after the first paint
            dock = QDockWidget(name, self)
            dock.setObjectName(name)
            dock.setWidget(widget)
            dock.setFeatures(QDockWidget.DockWidgetMovable | QDockWidget.DockWidgetFloatable)
            self.addDockWidget(area, dock)
            self.docks[name] = dock
        self.menus = WindowMenus(self)
        self.actions_by_name = self.menus.actions_by_name

        self.session.compiled.connect(self._compiled)
        self.session.sourceChanged.connect(self._kernel_opened)
        self.kernel_panel.openRequested.connect(self.open_kernel)
        self.tree.designSelected.connect(self.focus.pick)
        self.focus.messageShown.connect(self.show_message)
        self.focus.follow_models(self.models)
        self.models.allReady.connect(self._model_progress)
        self.models.modelReady.connect(self._model_progress)
        # the compilation, the search process's warm-up and the selection process start once the
        # window has painted (see _start_background): started before, they compete with its first paint
        self._background_started = False
        self._deferred = [self._build_search, self._build_proof, self._import_plots, self._build_search_panel,
                          self._build_pods, self._build_network, self._build_sweep]
        self.session.hold()
        self.installEventFilter(self)  # for the first paint
        self._restored = bool(self.settings.value("state", b""))
        self.restoreGeometry(self.settings.value("geometry", b""))
        self.restoreState(self.settings.value("state", b""))
        self.open_kernel(kernel_path)
        QTimer.singleShot(0, self._start_unless_shown)

    def _start_unless_shown(self) -> None:
        """The event loop runs: a window not shown (tests, scripts) starts its background work now, a
        shown one at its first paint, or in a second at the latest."""
        if self.isVisible():
            QTimer.singleShot(1000, self._start_background)
        else:
            self._start_background()

    def eventFilter(self, watched, event) -> bool:
        if watched is self and event.type() == QEvent.Paint:
            self.removeEventFilter(self)  # one paint is enough: events need no Python from now on
            QTimer.singleShot(0, self._start_background)  # once this paint is done
        return False

    def _start_background(self) -> None:
        if self._background_started:
            return
        self._background_started = True
        self.removeEventFilter(self)
        if self.background:
            self.session.host = CompileHost()  # islpy's long calls hold no GIL of this process
            self.selection.use_process(SelectionHost())  # a design's evaluation holds no GIL of this process
            self.search.prepare()  # the search process started in __init__ (a new one if it died)
        else:  # the compilation runs in a thread of this process: pyqtgraph and numpy are imported here first
            while self._deferred:
                self._deferred.pop(0)()
        self.session.release()
        QTimer.singleShot(0, self._build_next_part)  # while the kernel compiles in its process

    # -- parts built after the first paint -----------------------------------------------------
    @property
    def search(self) -> SearchSession:
        self._build_search()
        return self._search

    @property
    def proof(self) -> QtProof:
        self._build_proof()
        return self._proof

    @property
    def search_panel(self) -> QtSearchPanel:
        self._build_search_panel()
        return self._search_panel

    @property
    def points(self) -> DesignPoints:
        self._build_search_panel()
        return self._points

    @property
    def pods(self) -> QtPods:
        self._build_pods()
        return self._pods

    @property
    def network(self) -> NetworkSession:
        self._build_network()
        return self._network

    @property
    def network_view(self) -> QtNetwork:
        self._build_network()
        return self._network_view

    @property
    def panels_built(self) -> bool:
        """Every part deferred past the first paint is built."""
        return all(part is not None for part in (self._search, self._proof, self._search_panel, self._pods,
                                                  self._network, self.sweep_view))

    def _build_next_part(self) -> None:
        """One deferred part per turn of the event loop: events (a click, a repaint) get through between them."""
        if self._deferred:
            self._deferred.pop(0)()
            QTimer.singleShot(0, self._build_next_part)

    def _build_search(self) -> None:
        if self._search is not None:
            return
        from app.models.search_session import SearchSession  # numpy: after the first paint, see the module docstring

        self._search = SearchSession(self, host=self._search_host)
        self.focus.follow_search(self._search)
        self._search.stateChanged.connect(self._search_state)

    def _build_proof(self) -> None:
        if self._proof is not None:
            return
        from app.views.qt_proof import QtProof  # with the search session, after the first paint

        self._proof = QtProof(self.selection, self.tree_model, self.search)
        self.docks["Proof"].widget().deleteLater()  # the placeholder
        scroll = QScrollArea()  # a short dock (1366x768) scrolls the proof's sentences instead of cutting them
        scroll.setWidget(self._proof)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.docks["Proof"].setWidget(scroll)
        self.focus.follow_proof(self._proof)

    def _import_plots(self) -> None:
        """pyqtgraph (and numpy) imported with the theme's colours, before any plot is made."""
        theme.configure_plots()

    def _build_search_panel(self) -> None:
        if self._search_panel is not None:
            return
        from app.models.design_points import DesignPoints  # numpy: after the first paint, see the module docstring
        from app.views.qt_search_panel import QtSearchPanel  # pyqtgraph: likewise

        theme.configure_plots()
        self._points = DesignPoints(self.selection.cache, self)
        self._search_panel = QtSearchPanel(self.search, self._points)
        self._middle.replaceWidget(1, self._search_panel).deleteLater()  # the placeholder
        self._search_panel.startRequested.connect(self.start_search)
        self.focus.follow_plots(self._search_panel.results)
        self.focus.follow_bars(self._search_panel.ranked)

    def _build_sweep(self) -> None:
        if self.sweep_view is None:
            from app.models.parameter_sweep import SweepSession
            from app.views.qt_sweep import QtSweep  # pyqtgraph: after the first paint, see the module docstring

            self.sweep_view = QtSweep(SweepSession(self.selection, self))
            self._sweep_page.setWidget(self.sweep_view)

    def _build_pods(self) -> None:
        if self._pods is not None:
            return
        from app.views.qt_pods import QtPods  # pyqtgraph: after the first paint, see the module docstring

        theme.configure_plots()
        self._pods = QtPods()
        self._pods_page.setWidget(self._pods)

    def _build_network(self) -> None:
        if self._network is not None:
            return
        from app.models.network_session import NetworkSession  # the network engine: after the first paint
        from app.views.qt_network import QtNetwork

        self._network = NetworkSession(self)
        self._network_view = QtNetwork(self._network, lambda: self.session.work_file if self.session.space else None,
                                       kernel=lambda: self.session.space.kernel if self.session.space else None)
        self._network_page.setWidget(self._network_view)
        self._network_view.layerChosen.connect(self.show_network_layer)
        self._network_view.messageShown.connect(self.show_message)

    def show_view(self, widget: QWidget) -> None:
        """Bring the tab that holds `widget` (as its page or in its page's scroll area) to the front."""
        for k in range(self.views.count()):
            page = self.views.widget(k)
            if page is widget or (isinstance(page, QScrollArea) and page.widget() is widget):
                self.views.setCurrentIndex(k)

    def _tab_shown(self, index: int) -> None:
        page = self.views.widget(index)
        if page is self._pods_page:
            self._build_pods()
        elif page is self._sweep_page:
            self._build_sweep()
        elif page is self._network_page:
            self._build_network()

    def shortcuts(self) -> list[tuple[str, str]]:
        return self.menus.shortcuts()

    def show_message(self, text: str) -> None:
        """Report a problem without blocking: status bar and a non-modal message box."""
        self.last_message = text
        self.statusBar().showMessage(text, 10000)
        box = QMessageBox(QMessageBox.Warning, "Systolic Studio", text, QMessageBox.Ok, self)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.setModal(False)
        box.show()
        self.messageShown.emit(text)

    # -- kernel and designs --------------------------------------------------------------------
    def open_kernel(self, path) -> None:
        if self._search is not None and self._search.running:
            self.show_message("stop the search before opening another kernel")
            return
        try:
            self.session.open(path)
        except EngineError as exc:
            self.show_message(str(exc))

    def _compiled(self) -> None:
        freeze_after_young_collection()  # the new kernel's objects are long-lived: see gc_pauses
        space = self.session.space
        if space is None:
            self._set_views_enabled(False)  # the previous designs stay, greyed; the status says why
            return
        self._set_views_enabled(True)
        source = self.session.source()
        if self.background:
            self.models.build(source, [d.id for d in space.designs])
            self._model_progress()
        self.focus.show_space(space, self.session.device, source)
        if self.background and self.tree_model.design_ids():
            # the design a search of every design starts with: its model ready before any Start
            self.search.prepare(source, self.tree_model.design_ids()[0], str(self.selection.cache.folder))
        if self._network_view is not None:
            self._network_view.check_kernel()  # a workload that does not fit this kernel says so now

    def _kernel_opened(self) -> None:
        """Another kernel (or project): the previous kernel's plots must not stay under this one."""
        if self._search is not None and not self._search.running:  # not built yet: nothing to clear
            self._search.clear()
            if self._points is not None:
                self._points.update(None, None)

    def _set_views_enabled(self, enabled: bool) -> None:
        for widget in (self.tree, self.topology_panel, self.bottleneck, self.detail):
            widget.setEnabled(enabled)
        self.search_panel.start_button.setEnabled(enabled and not self.search.running)

    # -- search --------------------------------------------------------------------------------
    def start_search(self, method: str, seconds: float | None, selected_only: bool, samples: int | None = None,
                     seed: int = 0) -> None:
        """Search with `method` on a time budget (`seconds`) or a sample budget (`samples`), from `seed`."""
        if self.session.space is None:
            self.show_message("compile the kernel first: " + (self.session.error or "no kernel"))
            return
        designs = tuple(self.tree.selected_designs()) if selected_only else ()
        if selected_only and not designs:
            self.show_message("select one or more designs in the tree, or search all designs")
            return
        designs = designs or tuple(self.tree_model.design_ids())
        self.focus.queue(designs)
        source = self.session.source()
        request = SearchRequest(source, self.session.space.kernel.name, method,
                                None if seconds is None else float(seconds), designs, seed=int(seed),
                                cache_folder=str(self.selection.cache.folder), samples=samples)
        self.search.prepare()
        # no wait for the model pool: the search process loads each design's model before that
        # design's share starts (building it if the pool has not yet), so a cold cache costs the first
        # design's model, not all of them
        self.search.start(request, kernel_text=source.text, sizes=source.sizes,
                          kernel_name=request.kernel_name, kernel_path=str(self.session.path))

    def _model_progress(self, _design: str = "") -> None:
        """The model pool's progress in the status bar: it builds while the person reads the tree."""
        total = len(self.tree_model.design_ids())
        if self.models.busy and total:
            done = total - len(self.models.pending)
            self.model_status.setText(f"building the designs' models in the background: {done} of {total} "
                                      "(a search can start now)")
        else:
            self.model_status.setText("")

    def _search_state(self) -> None:
        """A search ended or a run was replayed (the tree and the selection follow through self.focus)."""
        s = self.search
        if s.running:
            return
        if s.message:
            self.statusBar().showMessage(s.message, 10000)
        if s.status in ("finished", "interrupted", "replayed") and s.result is not None:
            self.points.update(self.session.source(), s.result)

    def open_network(self, path=None) -> None:
        """File > Open network: a workload in the Network tab (asked for without `path`)."""
        self.views.setCurrentWidget(self._network_page)
        self.network_view.open_network(path) if path else self.network_view.ask_network()

    def show_network_layer(self, sizes: dict, design: str, params: dict) -> None:
        """A network layer clicked: the kernel at its sizes, its best design and configuration selected."""
        self.focus.pending = (design, params) if design else None
        self.session.set_sizes({**self.session.overrides, **sizes})

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._restored:  # first start: docks in proportion to the window, whatever its size
            self._restored = True
            QTimer.singleShot(0, self.fit_docks)  # once the window has its size

    def fit_docks(self) -> None:
        width = max(self.width(), 800)
        self.resizeDocks([self.docks["Kernel"], self.docks["Design detail"]],
                         [int(width * 0.25), int(width * 0.25)], Qt.Horizontal)

    def closeEvent(self, event) -> None:
        self._deferred.clear()  # a part not built yet is not needed any more
        self._background_started = True  # nor is a compilation not started yet
        if self._network is not None:
            self._network.wait()
        if self._points is not None:
            self._points.wait()
        self.session.shutdown()
        self.models.shutdown()
        if self._search is not None:
            self._search.shutdown()
        elif self._search_host is not None:  # closed before the session was built
            self._search_host.close()
        self.selection.shutdown()
        if self._pods is not None:
            self._pods.wait()
        if self.sweep_view is not None:
            self.sweep_view.sweep.wait()
        if self._proof is not None:
            self._proof.shutdown()
        self.topology_panel.shutdown()  # the verification's child process with it
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("state", self.saveState())
        self.settings.sync()
        super().closeEvent(event)


def _scrolled(page):
    """A tab page in a scroll area: its minimum size does not become the window's (1366x768 stays usable).
    `page` None: set later with setWidget."""
    area = QScrollArea()
    if page is not None:
        area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    return area
