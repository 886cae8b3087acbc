"""Reading and writing Kubernetes manifests: files, directories, standard input, YAML streams.

YAML is read the way kubectl reads it: kubectl turns YAML into JSON before anything sees it,
so a timestamp stays a string (``lastTransitionTime: 2026-01-01T00:00:00Z``), and a key given
twice in one mapping is an error rather than silently the last one. Input is UTF-8 (or UTF-16
with a byte order mark, as go-yaml reads it); anything else is refused with the offset of the
first byte that is not text, never a traceback.

Aliases are bounded as the API server's YAML decoder (go-yaml, behind sigs.k8s.io/yaml) bounds
them: a document whose aliases expand to many times its own size (a "billion laughs") is
refused before it is built, however small the file. Every error names the file and line.
"""

from __future__ import annotations

import codecs
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import yaml

from modelplane.kube.objects import Obj

_SUFFIXES = (".yaml", ".yml", ".json")
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BASE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# go-yaml's budget (decode.go, allowedAliasRatio; the fix for CVE-2019-11253): once a document
# decodes more than 1,000 nodes of which more than 100 come through aliases, the share that
# comes through aliases may be at most 99% up to 400,000 nodes, falling linearly to 10% at
# 4,000,000 nodes and beyond.
_ALIAS_MIN_ALIASED = 100
_ALIAS_MIN_DECODED = 1000
_ALIAS_RANGE_LOW = 400_000
_ALIAS_RANGE_HIGH = 4_000_000


class ManifestError(ValueError):
    """Input that cannot be read as Kubernetes objects; names the file and, when known, the
    line: ``<file>:<line>: <message>``."""

    def __init__(self, source: str, message: str, line: int = 0) -> None:
        super().__init__(source, message, line)
        self.source = source
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"{location(self.source, self.line)}: {self.message}"


def location(source: str, line: int) -> str:
    """``file:line``, or the file alone when the line is not known."""
    return f"{source}:{line}" if line else source


class ManifestLoader(_BASE_LOADER):
    """A safe loader without the timestamp type and with duplicate-key detection."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f'mapping key "{key}" already defined at line {seen[key]}',
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class Manifest:
    obj: Obj
    source: str
    index: int = 0
    """Position of the document in its source, from 1."""
    line: int = 0
    """The line the object starts on, from 1 (0: not known)."""
    node: Any = field(default=None, compare=False, repr=False)
    """The YAML node the object was built from: where each of its fields is written."""

    @property
    def where(self) -> str:
        """``file:line`` of the object."""
        return location(self.source, self.line)

    def where_is(self, path: str) -> str:
        """``file:line`` of a field path (``spec.engines[0].name``), as deep as the YAML
        reaches; the object's own line when the path is not written there."""
        return location(self.source, _line_of(self.node, path) or self.line)


def load(paths: Iterable[str], stdin: BinaryIO | None = None) -> list[Manifest]:
    """Every object in ``paths`` (files, directories searched recursively, ``-`` for standard
    input, read from ``stdin`` when given)."""
    manifests: list[Manifest] = []
    for source, data in _read_all(paths, stdin):
        manifests.extend(parse(decode(data, source), source))
    return manifests


def decode(data: bytes, source: str) -> str:
    """The text of a manifest file: UTF-8, or UTF-16 when a byte order mark says so."""
    utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
    try:
        return data.decode("utf-16" if utf16 else "utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ManifestError(
            source,
            f"not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start} is not text "
            "(manifests are YAML or JSON in UTF-8)",
            line,
        ) from None


def parse(text: str, source: str) -> list[Manifest]:
    """The objects of one YAML stream; a ``List`` contributes its items."""
    out: list[Manifest] = []
    for i, (doc, node) in enumerate(_documents(text, source), start=1):
        line = node.start_mark.line + 1
        if isinstance(doc, dict) and doc.get("kind") == "List":
            items = doc.get("items") or []
            _, nodes = _entry(node, "items") or (None, None)
            item_nodes = nodes.value if isinstance(nodes, yaml.SequenceNode) else []
            if not isinstance(items, list):
                raise ManifestError(source, "List: items: Invalid value: must be a list", line)
            for item, item_node in zip(items, item_nodes, strict=False):
                item_line = item_node.start_mark.line + 1
                _require_object(item, source, i, item_line)
                out.append(Manifest(item, source, i, item_line, item_node))
            continue
        _require_object(doc, source, i, line)
        out.append(Manifest(doc, source, i, line, node))
    return out


def _require_object(doc: Any, source: str, index: int, line: int) -> None:
    if not isinstance(doc, dict):
        what = {"list": "a list", "str": "a string"}.get(type(doc).__name__, type(doc).__name__)
        raise ManifestError(
            source, f"document {index} is not a Kubernetes object (it is {what})", line
        )


def _documents(text: str, source: str) -> Iterator[tuple[Any, Any]]:
    """Each non-empty document with the node it was built from, its aliases bounded first."""
    loader = ManifestLoader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            _check_aliases(node, source)
            doc = loader.construct_document(node)
            if doc is not None:
                yield doc, node
    except yaml.YAMLError as e:
        line = _yaml_line(e, text)
        raise ManifestError(source, f"not valid YAML: {_yaml_message(e)}", line) from None
    except RecursionError:
        raise ManifestError(source, "not valid YAML: nested too deeply") from None
    finally:
        loader.dispose()


def _yaml_message(e: yaml.YAMLError) -> str:
    if isinstance(e, yaml.MarkedYAMLError):
        message = e.problem or "malformed"
        if e.context and e.context_mark is not None:
            message += f" ({e.context} at line {e.context_mark.line + 1})"
        elif e.context:
            message += f" ({e.context})"
        return message
    if isinstance(e, yaml.reader.ReaderError):
        char = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or "\0")
        return f"character #x{char:04x} is not allowed: {e.reason}"
    return str(e)


def _yaml_line(e: yaml.YAMLError, text: str) -> int:
    mark = getattr(e, "problem_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    position = getattr(e, "position", None)
    if isinstance(position, int):
        return text.count("\n", 0, position) + 1
    return 0


def _check_aliases(root: Any, source: str) -> None:
    """Refuse a document whose aliases expand beyond go-yaml's budget, or contain themselves.

    The composed document is a graph in which an alias is its anchor's node again, so the
    document as decoded (every alias expanded) has as many nodes as the graph has paths from
    the root; that count is computed over the graph's distinct nodes, never by expanding it.
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            continue
        if key in sizes:
            continue
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise ManifestError(
                    source,
                    "not valid YAML: an anchor's value contains an alias of itself",
                    child.start_mark.line + 1,
                )
            if id(child) not in sizes:
                stack.append((child, False))
    decoded = sizes[id(root)]
    aliased = decoded - len(sizes)
    if _excessive(aliased, decoded):
        raise ManifestError(
            source,
            f"not valid YAML: document contains excessive aliasing: its aliases expand it to "
            f"{decoded:,} nodes from {len(sizes):,} written (refused as the API server's YAML "
            "decoder refuses it)",
            root.start_mark.line + 1,
        )


def _excessive(aliased: int, decoded: int) -> bool:
    if aliased <= _ALIAS_MIN_ALIASED or decoded <= _ALIAS_MIN_DECODED:
        return False
    if decoded <= _ALIAS_RANGE_LOW:
        return aliased * 100 > decoded * 99
    if decoded >= _ALIAS_RANGE_HIGH:
        return aliased * 10 > decoded
    allowed = 0.99 - 0.89 * (decoded - _ALIAS_RANGE_LOW) / (_ALIAS_RANGE_HIGH - _ALIAS_RANGE_LOW)
    return aliased > allowed * decoded


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _entry(node: Any, key: str) -> tuple[Any, Any] | None:
    """The key node and value node of ``key`` in a mapping node."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return k, v
    return None


_PATH_STEP = re.compile(r"\.?([^.\[\]]+)|\[([^\]]*)\]")


def _line_of(node: Any, path: str) -> int:
    """The line of the deepest node along ``path`` (0 without a node)."""
    if node is None:
        return 0
    line = node.start_mark.line + 1
    for m in _PATH_STEP.finditer(path):
        key, index = m.group(1), m.group(2)
        if index is not None and index.isdigit() and isinstance(node, yaml.SequenceNode):
            item = node.value[int(index)] if int(index) < len(node.value) else None
            entry = (item, item) if item is not None else None
        else:
            entry = _entry(node, key or index)
        if entry is None:
            break
        # The key's line: a block mapping or sequence value starts on the line after it.
        line = entry[0].start_mark.line + 1
        node = entry[1]
    return line


def require_type(manifest: Manifest) -> None:
    """Refuse an object without apiVersion and kind, naming where it came from."""
    obj = manifest.obj
    for name in ("apiVersion", "kind"):
        if not isinstance(obj.get(name), str) or not obj[name]:
            raise ManifestError(manifest.source, f"{name}: Required value", manifest.line)
    if not isinstance(obj.get("metadata", {}), dict):
        raise ManifestError(
            manifest.source,
            f"{obj['kind']}: metadata: Invalid value: must be an object",
            _line_of(manifest.node, "metadata") or manifest.line,
        )


def require_name(manifest: Manifest) -> None:
    """Refuse an object without ``metadata.name``, as ``kubectl apply`` does."""
    meta = manifest.obj.get("metadata") or {}
    if not isinstance(meta, dict) or not meta.get("name"):
        raise ManifestError(
            manifest.source,
            f"{manifest.obj.get('kind')}: metadata.name: Required value: name is required",
            manifest.line,
        )


def identity(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')}/{ns}{meta.get('name') or meta.get('generateName') or '?'}"


def yaml_files(paths: Iterable[Path]) -> Iterator[Path]:
    """Each file given, and the manifest files under each directory given, in sorted order."""
    for path in paths:
        if path.is_dir():
            yield from sorted(
                p
                for p in path.rglob("*")
                if p.suffix in _SUFFIXES
                and p.is_file()
                # Hidden directories (.git, .venv) hold no manifests.
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        else:
            yield path


STDIN = "<stdin>"


def _read_all(paths: Iterable[str], stdin: BinaryIO | None) -> Iterator[tuple[str, bytes]]:
    for p in paths:
        if p == "-":
            yield STDIN, (stdin or sys.stdin.buffer).read()
            continue
        path = Path(p)
        if not path.exists():
            raise ManifestError(p, "no such file or directory")
        files = list(yaml_files([path]))
        if path.is_dir() and not files:
            raise ManifestError(p, "directory holds no .yaml, .yml or .json files")
        for f in files:
            yield str(f), _read(f)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise ManifestError(str(path), f"cannot read: {e.strerror or e}") from None


class _Dumper(_BASE_DUMPER):
    # Manifests are read by people and by kubectl: shared sub-objects are written out in full.
    def ignore_aliases(self, data: object) -> bool:
        return True


def dump(objs: Iterable[Obj]) -> str:
    # Sorted keys, as kubectl prints them: protobuf Structs keep no order of their own.
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=True, explicit_start=True)
