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


def test_the_shared_build_hook_copies_an_identical_build_and_never_a_replaced_one(tmp_path, monkeypatch):
    """The test suite's hook ($SYSTOLIC_CSIM_SHARED_BUILDS, tests/conftest.py): a program compiled the
    same way again (same sources, headers, flags) is copied from the shared folder; a cached
    executable replaced after its build is compiled again, not run; a failed build is not kept."""
    from engine.csim import build as csim_build

    monkeypatch.setenv(csim_build.SHARED_BUILDS, str(tmp_path / "shared"))
    compiled = []
    real = csim_build._compile
    monkeypatch.setattr(csim_build, "_compile", lambda *a, **k: compiled.append(a[1]) or real(*a, **k))

    def build(folder: str, text: str = MAIN["main.cpp"] + HELPER):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "main.cpp").write_text(text)
        return csim_build.compile_program([tmp_path / folder / "main.cpp"], tmp_path / folder / "prog", includes=[],
                                          flags=["-O0"])

    first, second = build("a"), build("b")
    assert first.ok and second.ok and len(compiled) == 1 and output(second) == "42"
    assert second.exe == tmp_path / "b" / "prog" and str(second.exe) in second.command  # the command to rerun it
    kept = next(p for p in (tmp_path / "shared").iterdir() if (p / MANIFEST).is_file())
    marker = tmp_path / "hijacked"
    hijack(kept / "prog", marker)
    third = build("c")
    assert third.ok and len(compiled) == 2 and output(third) == "42" and not marker.exists()
    broken = build("d", "int main() { return }\n")
    assert not broken.ok and "main.cpp" in broken.error and str(tmp_path / "d") in broken.error
    assert not build("e", "int main() { return }\n").ok and len(compiled) == 4  # failures are compiled each time
