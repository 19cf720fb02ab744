"""A status line too long for its room shows its start (the best figure), whole in its tooltip."""
from __future__ import annotations

from app.views.elided_label import ElidedLabel


def test_a_long_line_keeps_its_start_and_the_whole_text(qtbot):
    text = "best 968.9 GOP/s, 360,926 samples in 14.3 s (finished)"
    label = ElidedLabel(text)
    qtbot.addWidget(label)
    label.resize(label.fontMetrics().horizontalAdvance(text) + 20, 24)
    label.show()
    qtbot.waitUntil(label.isVisible)
    assert label.shown_text() == text and label.toolTip() == text
    label.resize(label.fontMetrics().horizontalAdvance(text) // 2, 24)
    qtbot.waitUntil(lambda: label.width() < label.fontMetrics().horizontalAdvance(text))
    shown = label.shown_text()
    assert shown != text and shown.startswith("best 968.9 GOP/s") and shown.endswith("…"), shown
    assert label.text() == text and label.minimumSizeHint().width() == 0
    label.setText("no search yet")
    assert label.toolTip() == "no search yet"
