"""The kernel panel's "SIMD on space loops" (AutoSA's --simd-touch-space, compile_kernel's
`simd_touch_space`): toggling it compiles again and adds (or removes) the designs with SIMD on a
parallel space loop (ids `..__simd-<loop>`); a project keeps it. A pasted AutoSA string that only
such a design takes is refused, naming the box, until it is ticked."""
from __future__ import annotations

from app.project import load_project


def test_toggling_simd_on_space_loops_adds_those_designs_and_a_project_keeps_it(make_window, tiny_mm, compiled,
                                                                                settle, qtbot, tmp_path):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    box = window.kernel_panel.touch_space
    assert not box.isChecked() and "--simd-touch-space" in box.toolTip()
    before = window.tree_model.design_ids()

    box.click()
    compiled(window)
    qtbot.waitUntil(lambda: len(window.tree_model.design_ids()) > len(before))
    after = window.tree_model.design_ids()
    added = [d for d in after if d not in before]
    assert set(before) <= set(after) and added
    space = window.session.space
    assert space.simd_touch_space and window.session.source().simd_touch_space
    for design_id in added:  # each new design puts its SIMD on one of its parallel space loops
        design = space.design(design_id)
        assert design_id.endswith(f"__simd-{design.simd_loop}") and design.simd_loop in design.space_loops
    assert any(d.endswith("__simd-j") for d in added)
    settle(window.selection)

    path = tmp_path / "touch.ssproj"
    assert window.save(path) and load_project(path).simd_touch_space is True

    box.click()  # off again: AutoSA's default design list
    compiled(window)
    qtbot.waitUntil(lambda: window.tree_model.design_ids() == before)
    settle(window.selection)
    assert not window.session.space.simd_touch_space

    assert window.open_project(path)  # the project's flag comes back with it, ticked in the panel
    compiled(window)
    qtbot.waitUntil(lambda: window.tree_model.design_ids() == after)
    assert box.isChecked()
    settle(window.selection)


# simd[8] does not divide k_t1=4: of the [i,j] designs only the one with SIMD on j (8 lanes, its
# latency entry 1 as AutoSA's) takes it, and it is listed only with --simd-touch-space
ON_SPACE = "{kernel[]->space_time[3];kernel[]->array_part[8,16,4];kernel[]->latency[4,1];kernel[]->simd[8]}"


def test_a_string_for_a_space_loop_simd_design_asks_for_the_box_then_loads(make_window, tiny_mm, compiled, settle,
                                                                           qtbot):
    window = make_window(tiny_mm, background=False)
    compiled(window)
    settle(window.selection)
    shown = (window.selection.design, dict(window.selection.values))
    why = window.load_sa_sizes(ON_SPACE)
    assert "--simd-touch-space" in why and '"SIMD on space loops"' in why and "\n" not in why
    assert (window.selection.design, window.selection.values) == shown

    window.kernel_panel.touch_space.click()
    compiled(window)
    qtbot.waitUntil(lambda: window.selection.space is window.session.space)
    assert window.load_sa_sizes(ON_SPACE) == ""
    settle(window.selection)
    design = window.selection.design
    assert design.space_loops == ("i", "j") and design.simd_loop == "j" and design.id.endswith("__simd-j")
    assert window.selection.values["j_t2"] == 8 and window.selection.values["j_t1"] == 16
    assert window.selection.report is not None and not window.selection.error
