"""Workload files -> a Network: a list of layers, each with its loop sizes in the kernel's define names.

Two formats are read:
- Odyssey's JSON, as it is: `{"workloads": [{"name": "conv1-1", "tags": ["conv"], "params":
  {"i": 3, "o": 64, "r": 224, "c": 224, "p": 3, "q": 3}}, ...]}` (optionally with a top-level "name");
- a CSV with a header: `name` first, an optional `tags` column (tags separated by `;`), then one
  column per size, e.g. `name,i,o,r,c,p,q`.

A size key becomes a define name by upper-casing it (`i` -> `I`); Odyssey's CNN keys `r` / `c` (output
rows / columns) are the bundled CNN kernel's `H` / `W`. `check_against_kernel` then checks that every
layer gives exactly the sizes a kernel's `#define`s need.

A workload file is untrusted: a regular UTF-8 file under engine/validation.py's size cap, JSON
nested at most MAX_JSON_DEPTH deep, CSV fields of at most MAX_FIELD characters; the network's name
and its layers' names are printable and hold no path separator or `..` (the network's name goes
into the default output folder's name, which must stay where it is put).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import EngineError, SourceLocation
from engine.limits import MAX_EXTENT
from engine.resources import RESOURCES
from engine.validation import loads_json, read_text

NETWORKS = RESOURCES / "networks"  # the bundled workloads: vgg16.json, resnet50.json

ODYSSEY_ALIASES = {"r": "H", "c": "W"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_FIELD = 1024  # characters in a CSV field (names and sizes are short)
MAX_NAME = 200  # characters of a network or layer name


class WorkloadError(EngineError):
    """A workload file cannot be read or does not fit the kernel."""


@dataclass(frozen=True)
class Layer:
    name: str
    sizes: dict[str, int]
    tags: tuple[str, ...] = ()
    line: int | None = field(default=None, compare=False)   # where the layer is written, for errors


@dataclass(frozen=True)
class Network:
    name: str
    layers: tuple[Layer, ...]
    path: str = ""

    def layer(self, name: str) -> Layer:
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise WorkloadError(f"network {self.name!r} has no layer {name!r}")


def define_name(key: str) -> str:
    """The kernel define a workload size key maps to (Odyssey's r/c -> H/W, else upper case)."""
    return ODYSSEY_ALIASES.get(key, key.upper())


def load_network(path: str | Path) -> Network:
    """Read a workload file (.json in Odyssey's format, .csv otherwise); a bare bundled name
    (`vgg16`, `resnet50`) reads resources/networks/NAME.json."""
    path = Path(path)
    if not path.exists() and path.parent == Path(".") and (NETWORKS / f"{path.name}.json").is_file():
        path = NETWORKS / f"{path.name}.json"
    text = read_text(path, "workload file", error=WorkloadError)
    if path.suffix.lower() == ".csv":
        return parse_csv(text, str(path))
    return parse_json(text, str(path))


def parse_json(text: str, file: str = "<workload>") -> Network:
    data = loads_json(text, file, "workload file", error=WorkloadError)
    if not isinstance(data, dict) or not isinstance(data.get("workloads"), list):
        raise WorkloadError('expected an object with a "workloads" list (Odyssey\'s workload format)',
                            SourceLocation(file, 1))
    layers = []
    for index, entry in enumerate(data["workloads"]):
        where = SourceLocation(file, _line_of_entry(text, entry, index))
        if not isinstance(entry, dict):
            raise WorkloadError(f"workload #{index + 1} is not an object", where)
        name = entry.get("name", f"layer{index + 1}")
        if not isinstance(name, str) or not name:
            raise WorkloadError(f"workload #{index + 1}: \"name\" must be a non-empty string", where)
        check_name(name, "layer name", where)
        params = entry.get("params")
        if not isinstance(params, dict) or not params:
            raise WorkloadError(f"layer {name}: \"params\" must be an object of loop sizes, "
                                'e.g. {"i": 3, "o": 64, "r": 224, "c": 224, "p": 3, "q": 3}', where)
        tags = entry.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise WorkloadError(f"layer {name}: \"tags\" must be a list of strings", where)
        layers.append(Layer(name, _sizes(name, params, where), tuple(tags), where.line))
    network_name = data.get("name") or Path(file).stem
    if not isinstance(network_name, str):
        raise WorkloadError(f"the network's \"name\" must be a string, not {json.dumps(network_name)[:40]}",
                            SourceLocation(file, 1))
    check_name(network_name, "network name", SourceLocation(file, 1))
    return _network(network_name, layers, file)


def check_name(name: str, what: str, where: SourceLocation | None = None) -> str:
    """A network or layer name: 1..MAX_NAME printable characters, no path separator, not `.` or `..`
    (a network's name becomes part of a folder name)."""
    shown = json.dumps(name)[:60]
    if not name or len(name) > MAX_NAME:
        raise WorkloadError(f"{what} {shown} must be 1..{MAX_NAME} characters", where)
    if not name.isprintable() or "/" in name or "\\" in name or ".." in name or name.strip(".") == "":
        raise WorkloadError(f"{what} {shown}: names are printable, without '/', '\\' or '..'", where)
    return name


def parse_csv(text: str, file: str = "<workload>") -> Network:
    rows = []
    reader = csv.reader(io.StringIO(text))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as error:  # a field over the csv module's own limit, a NUL byte, ...
            reason = (f"a field of more than {csv.field_size_limit():,} characters; the limit is {MAX_FIELD:,}"
                      if "field limit" in str(error) else f"not a readable CSV line: {error}")
            raise WorkloadError(reason, SourceLocation(file, reader.line_num)) from None
        if any(len(cell) > MAX_FIELD for cell in row):
            raise WorkloadError(f"a field of {max(map(len, row)):,} characters; the limit is {MAX_FIELD:,}",
                                SourceLocation(file, reader.line_num))
        rows.append((reader.line_num, row))
    numbered = [(n, row) for n, row in rows if row and any(c.strip() for c in row)
                and not row[0].lstrip().startswith("#")]
    if not numbered:
        raise WorkloadError("empty workload CSV: expected a header `name,<size>,...` and one row per layer",
                            SourceLocation(file, 1))
    header_line, header = numbered[0]
    header = [h.strip() for h in header]
    if header[0] != "name" or len(header) < 2:
        raise WorkloadError("the CSV header must start with `name` followed by size columns, e.g. "
                            "`name,i,o,r,c,p,q`", SourceLocation(file, header_line))
    layers = []
    for line, row in numbered[1:]:
        where = SourceLocation(file, line)
        if len(row) != len(header):
            raise WorkloadError(f"{len(row)} fields, the header has {len(header)}", where)
        values = dict(zip(header, (c.strip() for c in row)))
        name = values.pop("name")
        if not name:
            raise WorkloadError("empty layer name", where)
        check_name(name, "layer name", where)
        tags = tuple(t for t in values.pop("tags", "").split(";") if t)
        layers.append(Layer(name, _sizes(name, values, where), tags, line))
    return _network(check_name(Path(file).stem, "network name", SourceLocation(file)), layers, file)


def kernel_size_names(kernel) -> set[str]:
    """The integer #defines a parsed kernel's loop nest uses: those written inside its scop region."""
    source = kernel.source
    start, end = source.find("#pragma scop"), source.find("#pragma endscop")
    region = source[start:end] if 0 <= start < end else source
    used = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", region))
    return {name for name in kernel.sizes if name in used}


def check_against_kernel(network: Network, kernel) -> None:
    """Every layer gives a size for each define the kernel's loop nest uses, and none it lacks."""
    needed = kernel_size_names(kernel)
    for layer in network.layers:
        where = SourceLocation(network.path, layer.line) if network.path else None
        missing = sorted(needed - set(layer.sizes))
        if missing:
            raise WorkloadError(f"layer {layer.name}: no size for {', '.join(missing)} (the kernel's sizes are "
                                f"{', '.join(sorted(needed))})", where)
        unknown = sorted(set(layer.sizes) - needed)
        if unknown:
            raise WorkloadError(f"layer {layer.name}: the kernel {kernel.name} has no size {', '.join(unknown)} "
                                f"(its sizes are {', '.join(sorted(needed))})", where)


def _sizes(layer: str, params: dict, where: SourceLocation) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for key, value in params.items():
        if not isinstance(key, str) or not _NAME.match(key):
            raise WorkloadError(f"layer {layer}: size name {key!r} is not an identifier", where)
        if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
            raise WorkloadError(f"layer {layer}: size {key} = {value!r} is not a positive integer", where)
        number = int(str(value)) if len(str(value).strip()) <= 20 else MAX_EXTENT + 1
        if number <= 0:
            raise WorkloadError(f"layer {layer}: size {key} = {number}, sizes must be at least 1", where)
        if number > MAX_EXTENT:
            raise WorkloadError(f"layer {layer}: size {key} = {str(value).strip()[:30]}; the limit is 2^31-1 = "
                                f"{MAX_EXTENT:,} (the models and the HLS code count loops in 32 bits)", where)
        name = define_name(key)
        if name in sizes:
            raise WorkloadError(f"layer {layer}: size {name} given twice", where)
        sizes[name] = number
    return sizes


def _network(name: str, layers: list[Layer], file: str) -> Network:
    if not layers:
        raise WorkloadError("the workload has no layers", SourceLocation(file, 1))
    seen: set[str] = set()
    for layer in layers:
        if layer.name in seen:
            raise WorkloadError(f"layer {layer.name} appears twice", SourceLocation(file, layer.line))
        seen.add(layer.name)
    return Network(name, tuple(layers), file)


def _line_of_entry(text: str, entry: object, index: int) -> int | None:
    """Line of a workload's `"name": "..."` in the text (JSON loses positions; names are unique)."""
    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
        match = re.search(r'"name"\s*:\s*' + re.escape(json.dumps(entry["name"])), text)
        if match:
            return text.count("\n", 0, match.start()) + 1
    return None
