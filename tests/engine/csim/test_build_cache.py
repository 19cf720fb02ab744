"""The timed C simulation's build cache (engine/csim/build.py) runs nothing it did not build: a
cached executable or object replaced after the build, a manifest that does not match, a cache folder
others may write or a symlink in its place all lead to a rebuild, never to running what is there."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from engine.csim.build import MANIFEST, cached_build, cached_object, file_sha256

MAIN = {"main.cpp": '#include <cstdio>\nint helper();\nint main() { std::printf("%d\\n", helper()); return 0; }\n'}
HELPER = "int helper() { return 42; }\n"


@pytest.fixture
def built(tmp_path):
    source = tmp_path / "helper.cpp"
    source.write_text(HELPER)
    cache = tmp_path / "cache"
    obj = cached_object(source, includes=[], flags=["-O0"], cache=cache)
    build, reused = cached_build(MAIN, "prog", includes=[], flags=["-O0"], objects=(obj,), cache=cache)
    assert build.ok and not reused
    return source, cache, obj, build


def again(source: Path, cache: Path):
    obj = cached_object(source, includes=[], flags=["-O0"], cache=cache)
    return obj, cached_build(MAIN, "prog", includes=[], flags=["-O0"], objects=(obj,), cache=cache)


def output(build) -> str:
    return subprocess.run([str(build.exe)], capture_output=True, text=True, check=True).stdout.strip()


def hijack(exe: Path, marker: Path) -> None:
    exe.unlink()
    exe.write_text(f"#!/bin/sh\ntouch {marker}\necho 42\n")
    exe.chmod(0o700)


def test_an_untouched_build_is_reused(built):
    source, cache, obj, first = built
    obj2, (build, reused) = again(source, cache)
    assert obj2 == obj and reused and build.exe == first.exe and output(build) == "42"


def test_an_executable_replaced_in_the_cache_is_rebuilt_not_run(built, tmp_path):
    source, cache, _, first = built
    marker = tmp_path / "hijacked"
    hijack(first.exe, marker)
    _, (build, reused) = again(source, cache)
    assert not reused and output(build) == "42" and not marker.exists()
    assert (build.folder / MANIFEST).is_file()
    _, (third, reused) = again(source, cache)  # the rebuilt one is trusted again
    assert reused and third.exe == build.exe


def test_sources_edited_in_the_cache_folder_are_rebuilt(built, tmp_path):
    source, cache, _, first = built
    (first.folder / "main.cpp").write_text("int main() { return 3; }\n")  # sources no longer the key's
    _, (build, reused) = again(source, cache)
    assert not reused and output(build) == "42"


def test_a_cache_folder_others_may_write_is_not_trusted(built):
    source, cache, _, first = built
    os.chmod(first.folder, 0o777)
    _, (build, reused) = again(source, cache)
    assert not reused and output(build) == "42"


def test_a_replaced_cached_object_is_rebuilt(built):
    source, cache, obj, _ = built
    obj.write_bytes(b"not an object")
    obj2, (build, _) = again(source, cache)
    assert file_sha256(obj2) == (obj2.parent / (obj2.name + ".sha256")).read_text().strip()
    assert output(build) == "42"


def test_a_symlink_in_place_of_the_build_folder_is_replaced(built, tmp_path):
    source, cache, _, first = built
    elsewhere = tmp_path / "elsewhere"
    first.folder.rename(elsewhere)
    marker = tmp_path / "hijacked"
    hijack(elsewhere / "prog", marker)
    first.folder.symlink_to(elsewhere)
    _, (build, reused) = again(source, cache)
    assert not reused and not build.folder.is_symlink() and output(build) == "42" and not marker.exists()
