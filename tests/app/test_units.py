"""One spelling of microseconds in the window: "µs" in every text the app shows, never "us"
(issue 29 item 12). Reads the string literals of app/ (tokenize), so comments do not count."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import app

ASCII_MICROSECONDS = re.compile(r"(\d|\}|\))\s?us\b|\(us\)|^us$")


def test_no_text_of_the_window_writes_microseconds_as_us():
    found = []
    for path in Path(app.__file__).parent.rglob("*.py"):
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
            if tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)):
                text = tok.string.strip("\"'frb")
                if ASCII_MICROSECONDS.search(text):
                    found.append(f"{path.name}:{tok.start[0]}: {tok.string[:60]}")
    assert found == []
