"""A run database (engine/search/store.py's `runs` table) -> each stored run's problem sizes, for a
list of runs that names them (the explorer's runs dialog) without loading every run's designs and
traces (RunStore.load). A row whose sizes cannot be decoded is left out: RunStore.load names why."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def run_sizes(database: str | Path) -> dict[int, dict[str, int]]:
    """Run id -> its sizes ({} for a database that cannot be read: the caller shows runs without them)."""
    try:
        with sqlite3.connect(f"file:{Path(database).expanduser()}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT id, sizes FROM runs").fetchall()
    except sqlite3.Error:
        return {}
    sizes = {}
    for run_id, text in rows:
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            continue
        if isinstance(value, dict):
            sizes[int(run_id)] = value
    return sizes
