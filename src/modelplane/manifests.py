"""Reading and writing Kubernetes manifests: files, directories, standard input, YAML streams.

YAML is read the way kubectl reads it: kubectl turns YAML into JSON before anything sees it,
so a timestamp stays a string (``lastTransitionTime: 2026-01-01T00:00:00Z``), and a key given
twice in one mapping is an error rather than silently the last one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import yaml

Obj = dict[str, Any]
_SUFFIXES = (".yaml", ".yml", ".json")
_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BASE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class ManifestError(ValueError):
    """Input that cannot be read as Kubernetes objects; the message names the file."""


class DuplicateKeyError(yaml.YAMLError):
    """A mapping that names the same key twice."""


class ManifestLoader(_BASE_LOADER):
    """A safe loader without the timestamp type and with duplicate-key detection."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()
    }

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                mark = key_node.start_mark
                raise DuplicateKeyError(
                    f'line {mark.line + 1}: mapping key "{key}" already defined'
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


@dataclass(frozen=True)
class Manifest:
    obj: Obj
    source: str
    index: int = 0
    """Position of the document in its source, from 1."""


def load_all(text: str | bytes) -> list[Any]:
    """Every non-empty document of a YAML stream."""
    return [doc for doc in yaml.load_all(text, Loader=ManifestLoader) if doc is not None]


def load(paths: Iterable[str]) -> list[Manifest]:
    """Every object in ``paths`` (files, directories searched recursively, ``-`` for stdin)."""
    manifests: list[Manifest] = []
    for source, text in _read_all(paths):
        manifests.extend(parse(text, source))
    return manifests


def parse(text: str, source: str) -> list[Manifest]:
    """The objects of one YAML stream; a ``List`` contributes its items."""
    try:
        docs = load_all(text)
    except yaml.YAMLError as e:
        raise ManifestError(f"{source}: not valid YAML: {e}") from None
    out: list[Manifest] = []
    for i, doc in enumerate(docs, start=1):
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for obj in items or []:
            if not isinstance(obj, dict):
                raise ManifestError(f"{source} (document {i}) is not a Kubernetes object")
            out.append(Manifest(obj, source, i))
    return out


def require_type(manifest: Manifest) -> None:
    """Refuse an object without apiVersion and kind, naming where it came from."""
    obj, where = manifest.obj, f"{manifest.source} (document {manifest.index})"
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj[field]:
            raise ManifestError(f"{where}: {field}: Required value")
    if not isinstance(obj.get("metadata", {}), dict):
        raise ManifestError(f"{where}: metadata: Invalid value: must be an object")


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


def _read_all(paths: Iterable[str]) -> Iterator[tuple[str, str]]:
    for p in paths:
        if p == "-":
            yield "<stdin>", sys.stdin.read()
            continue
        path = Path(p)
        if not path.exists():
            raise ManifestError(f"{p}: no such file or directory")
        files = list(yaml_files([path]))
        if path.is_dir() and not files:
            raise ManifestError(f"{p}: directory holds no .yaml, .yml or .json files")
        for f in files:
            yield str(f), _read(f)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: cannot read: {e}") from None


class _Dumper(_BASE_DUMPER):
    # Manifests are read by people and by kubectl: shared sub-objects are written out in full.
    def ignore_aliases(self, data: object) -> bool:
        return True


def dump(objs: Iterable[Obj]) -> str:
    # Sorted keys, as kubectl prints them: protobuf Structs keep no order of their own.
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=True, explicit_start=True)
