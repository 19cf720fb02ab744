"""The main window's parts built after its first paint (search session, Proof dock, search panel
with its plots, Pods and Network tabs): the event loop builds them one per turn while the kernel
compiles in its process, a part read or a tab shown before then is built at once in its place and
wired, and a window closed before then builds none of them."""
from __future__ import annotations

from app.views.qt_network import QtNetwork
from app.views.qt_pods import QtPods
from app.views.qt_proof import QtProof


def test_the_event_loop_builds_every_deferred_part_in_its_place(make_window, qtbot):
    window = make_window()  # the compilation in its process: the parts are built one per turn meanwhile
    assert not window.panels_built  # nothing deferred is built by the constructor
    qtbot.waitUntil(lambda: window.panels_built, timeout=60000)
    assert window.centralWidget().widget(1) is window.search_panel
    assert window.docks["Proof"].widget().widget() is window.proof and isinstance(window.proof, QtProof)
    pages = {window.views.tabText(k): window.views.widget(k) for k in range(window.views.count())}
    assert pages["Pods"].widget() is window.pods and pages["Network"].widget() is window.network_view


def test_a_part_read_before_the_event_loop_runs_is_built_at_once_and_wired(make_window, qtbot):
    window = make_window(background=False)
    panel = window.search_panel
    assert window.centralWidget().widget(1) is panel and window.points is panel.results.points
    with qtbot.waitSignal(window.messageShown) as shown:  # Start before the kernel compiled: said why
        panel.startRequested.emit("hybrid", 1.0, False, None, 0)
    assert shown.args[0].startswith("compile the kernel first")


def test_showing_a_tab_not_built_yet_builds_it(make_window):
    window = make_window(background=False)
    names = [window.views.tabText(k) for k in range(window.views.count())]
    for name, kind in (("Pods", QtPods), ("Network", QtNetwork)):
        window.views.setCurrentIndex(names.index(name))
        assert isinstance(window.views.currentWidget().widget(), kind)


def test_a_window_closed_before_its_parts_are_built_builds_none_of_them(make_window, qtbot):
    window = make_window(background=False)
    window.close()
    qtbot.wait(300)
    assert not window.panels_built and not window.docks["Proof"].findChildren(QtProof)
