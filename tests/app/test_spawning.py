"""The window's child processes leave the parent's main script alone: a script (as the installed
`systolic-studio` command is) that imports a module at its top starts a child with
app.workers.spawning's context; the child does not re-run the script, so that module is not loaded
in it, while a child of multiprocessing's own spawn context re-runs the script and loads it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

PROBE = """
    import sys

    def report(queue):  # a child's target lives in a module, never in the main script
        queue.put("colorsys" in sys.modules)
"""
SCRIPT = """
    import colorsys  # the script's own import: a child that re-runs the script loads it too
    import multiprocessing
    from app.workers.spawning import spawn_context
    from probe import report

    if __name__ == "__main__":
        for name, context in (("ours", spawn_context()), ("spawn", multiprocessing.get_context("spawn"))):
            queue = context.Queue()
            child = context.Process(target=report, args=(queue,))
            child.start()
            loaded = queue.get()  # the child's report: an event (the run's own cap bounds a hang)
            child.join()
            print(name, loaded, child.exitcode, flush=True)
"""


def test_children_do_not_rerun_the_main_script(tmp_path):
    script = tmp_path / "studio_like.py"
    script.write_text(textwrap.dedent(SCRIPT))
    (tmp_path / "probe.py").write_text(textwrap.dedent(PROBE))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["ours False 0", "spawn True 0"], done.stdout
