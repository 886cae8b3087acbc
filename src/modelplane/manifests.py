"""Reading Kubernetes manifests from files, directories and standard input."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]
_YAML_SUFFIXES = (".yaml", ".yml", ".json")


class ManifestError(ValueError):
    """Input that cannot be read as Kubernetes objects; the message names the file."""


@dataclass(frozen=True)
class Manifest:
    obj: Obj
    source: str


def load(paths: Iterable[str]) -> list[Manifest]:
    """Every object in ``paths`` (files, directories searched recursively, ``-`` for stdin)."""
    manifests: list[Manifest] = []
    for source, text in _read_all(paths):
        manifests.extend(parse(text, source))
    return manifests


def parse(text: str, source: str) -> list[Manifest]:
    try:
        docs = list(yaml.load_all(text, Loader=_loader()))
    except yaml.YAMLError as e:
        raise ManifestError(f"{source}: not valid YAML: {e}") from None
    out: list[Manifest] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        items = doc.get("items") if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
        for obj in items or []:
            _check_object(obj, f"{source} (document {i + 1})")
            out.append(Manifest(obj, source))
    return out


def identity(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    ns = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')}/{ns}{meta.get('name') or meta.get('generateName') or '?'}"


def _check_object(obj: object, where: str) -> None:
    if not isinstance(obj, dict):
        raise ManifestError(f"{where}: expected a Kubernetes object, got {type(obj).__name__}")
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj[field]:
            raise ManifestError(f"{where}: {field}: Required value")
    if not isinstance(obj.get("metadata", {}), dict):
        raise ManifestError(f"{where}: metadata: Invalid value: must be an object")


def _read_all(paths: Iterable[str]) -> Iterator[tuple[str, str]]:
    for p in paths:
        if p == "-":
            yield "<stdin>", sys.stdin.read()
            continue
        path = Path(p)
        if path.is_dir():
            files = sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in _YAML_SUFFIXES)
            if not files:
                raise ManifestError(f"{p}: directory holds no .yaml, .yml or .json files")
            for f in files:
                yield str(f), _read(f)
        else:
            yield p, _read(path)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        raise ManifestError(f"{path}: no such file or directory") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ManifestError(f"{path}: cannot read: {e}") from None


def _loader() -> type[yaml.SafeLoader]:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    # Manifests are read by people and by kubectl: shared sub-objects are written out in full.
    def ignore_aliases(self, data: object) -> bool:
        return True


def dump(objs: Iterable[Obj]) -> str:
    return yaml.dump_all(list(objs), Dumper=_Dumper, sort_keys=False, explicit_start=True)
