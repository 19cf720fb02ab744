"""engine/ source -> its module import graph (every import statement, function-local ones included),
checked for the layering: the compiler imports nothing above it, no engine module imports itself
back through others, and the engine imports neither Qt nor the app."""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import networkx as nx

import engine

ENGINE = Path(engine.__file__).parent
ABOVE_COMPILER = ("engine.models", "engine.export", "engine.search", "engine.sim", "engine.csim", "engine.cli",
                  "engine.network", "engine.pods", "engine.studies", "app")
ABOVE_ENGINE = ("PySide2", "PySide6", "PyQt4", "PyQt5", "PyQt6", "pyqtgraph", "shiboken2", "shiboken6", "app")

# Import cycles left on purpose, each as the sorted tuple of its modules, with the reason. None today:
# a fact two modules share lives in a module below both (engine/compiler/expressions.py holds the
# descriptor's expression evaluator that architecture/pe.py and descriptor.py both use).
ALLOWED_CYCLES: dict[tuple[str, ...], str] = {}


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file under `root` (a package directory)."""
    result = {}
    for path in root.rglob("*.py"):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        result[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return result


def imports(module: str, path: Path, known: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported name, line) for every import in the file, at any depth: `from X import a` names
    X.a when that is a module of `known`, else X; relative imports are made absolute."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            found += [(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base, node.lineno)
                      for alias in node.names]
    return found


@lru_cache(maxsize=None)
def imports_by_module(root: Path) -> dict[str, tuple[Path, list[tuple[str, int]]]]:
    """Module under `root` -> its file and its imports (parsed once per root)."""
    known = modules(root)
    return {module: (path, imports(module, path, known)) for module, path in known.items()}


def import_graph(root: Path) -> nx.DiGraph:
    """Module -> module it imports, over the modules under `root` (an import of a name inside a
    module counts as importing that module)."""
    parsed = imports_by_module(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(parsed)
    for module, (_, found) in parsed.items():
        for name, line in found:
            while name and name not in parsed:
                name = name.rpartition(".")[0]
            if name and name != module:
                graph.add_edge(module, name, line=line)
    return graph


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _offenders(prefix: str, forbidden: tuple[str, ...]) -> list[str]:
    return [f"{path.relative_to(ENGINE.parent)}:{line} imports {name}"
            for module, (path, found) in sorted(imports_by_module(ENGINE).items()) if _within(module, (prefix,))
            for name, line in found if _within(name, forbidden)]


def _cycles(graph: nx.DiGraph) -> set[tuple[str, ...]]:
    return {tuple(sorted(cycle)) for cycle in nx.simple_cycles(graph)}


def test_compiler_imports_nothing_above_it():
    assert _offenders("engine.compiler", ABOVE_COMPILER) == []


def test_engine_imports_neither_qt_nor_the_app():
    assert _offenders("engine", ABOVE_ENGINE) == []


def test_engine_modules_import_one_way():
    graph = import_graph(ENGINE)
    assert graph.has_edge("engine.compiler.descriptor", "engine.compiler.architecture.build")  # the parse sees imports
    cycles = _cycles(graph)
    assert sorted(cycles - set(ALLOWED_CYCLES)) == []
    assert sorted(set(ALLOWED_CYCLES) - cycles) == []  # an allowed cycle that is gone leaves the list


def test_a_function_local_import_closes_a_cycle(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "b.py").write_text("def f():\n    from ..a import f as g\n    return g\n")
    (package / "c.py").write_text("import pkg.a\n")
    graph = import_graph(package)
    assert _cycles(graph) == {("pkg.a", "pkg.sub.b")}
    assert graph.has_edge("pkg.c", "pkg.a") and graph.edges["pkg.sub.b", "pkg.a"]["line"] == 2
