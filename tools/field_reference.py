"""Writes docs/reference.md, the field reference of every kind, from the XRDs under apis/.

    uv run python tools/field_reference.py            # rewrite docs/reference.md
    uv run python tools/field_reference.py --check    # exit 1 when it is out of date

Every field is listed with its type, default, constraints (enum, bounds, pattern, lengths) and
the message of every validation rule that sits on it, so the reference cannot drift from what
the API server enforces (tests/docs/test_reference.py regenerates it and compares).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
APIS = ROOT / "apis"
OUT = ROOT / "docs" / "reference.md"

Obj = dict[str, Any]


def reference() -> str:
    lines = [
        "# Field reference",
        "",
        "Generated from the XRDs under `apis/` by `tools/field_reference.py`; do not edit by hand.",
        "Each kind's fields in schema order: type, default, constraints, and the message of each",
        "validation rule on the field (what `modelplane validate` and the API server print).",
        "",
    ]
    for path in sorted(APIS.glob("*/definition.yaml")):
        xrd = yaml.safe_load(path.read_text())
        lines += _kind(xrd, path.relative_to(ROOT).as_posix())
    return "\n".join(lines).rstrip() + "\n"


def _kind(xrd: Obj, source: str) -> list[str]:
    spec = xrd["spec"]
    kind = spec["names"]["kind"]
    out = [f"## {kind}", ""]
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        schema = version["schema"]["openAPIV3Schema"]
        out.append(
            f"`{spec['group']}/{version['name']}`, {spec.get('scope', 'Namespaced')}; "
            f"defined in `{source}`."
        )
        out.append("")
        if schema.get("description"):
            out += [_one_line(schema["description"]), ""]
        out += [
            "| field | type | default | constraints and rules | description |",
            "|---|---|---|---|---|",
        ]
        for field, node, required in _walk(schema, ""):
            out.append(_row(field, node, required))
        out.append("")
    return out


def _walk(node: Obj, prefix: str) -> list[tuple[str, Obj, bool]]:
    rows: list[tuple[str, Obj, bool]] = []
    required = set(node.get("required") or ())
    for name, child in (node.get("properties") or {}).items():
        if not prefix and name in ("apiVersion", "kind", "metadata"):
            continue
        path = f"{prefix}.{name}" if prefix else name
        rows.append((path, child, name in required))
        rows += _walk(child, path)
        items = child.get("items")
        if isinstance(items, dict):
            rows += _walk(items, path + "[]")
        extra = child.get("additionalProperties")
        if isinstance(extra, dict) and extra.get("properties"):
            rows += _walk(extra, path + ".<key>")
    return rows


def _row(field: str, node: Obj, required: bool) -> str:
    kind = str(node.get("type", "any"))
    if kind == "array" and isinstance(node.get("items"), dict):
        kind = f"array of {node['items'].get('type', 'any')}"
    if node.get("x-kubernetes-int-or-string"):
        kind = "integer or string"
    default = f"`{_flow(node['default'])}`" if "default" in node else ""
    constraints = []
    if required:
        constraints.append("required")
    if "enum" in node:
        constraints.append("one of " + ", ".join(f"`{v}`" for v in node["enum"]))
    for key, word in (
        ("minimum", "min"),
        ("maximum", "max"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("maxProperties", "max properties"),
    ):
        if key in node:
            constraints.append(f"{word} {node[key]}")
    if "pattern" in node:
        constraints.append(f"pattern `{node['pattern']}`")
    if node.get("format"):
        constraints.append(f"format {node['format']}")
    raw = node.get("items")
    items: Obj = raw if isinstance(raw, dict) else {}
    if items.get("enum"):
        constraints.append("each one of " + ", ".join(f"`{v}`" for v in items["enum"]))
    # Rules on an array's items are the array's entries' rules: shown on the array's row.
    for rule in [
        *(node.get("x-kubernetes-validations") or ()),
        *(items.get("x-kubernetes-validations") or ()),
    ]:
        constraints.append(_cell(str(rule.get("message") or rule.get("rule"))))
    return (
        f"| `{field}` | {kind} | {default} | {'; '.join(constraints)} | "
        f"{_cell(_one_line(str(node.get('description') or '')))} |"
    )


def _flow(value: Any) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=10_000)
        .strip()
        .removesuffix("...")
        .strip()
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main() -> int:
    text = reference()
    if "--check" in sys.argv[1:]:
        if OUT.read_text() != text:
            print(
                f"{OUT.relative_to(ROOT)} is out of date: run tools/field_reference.py",
                file=sys.stderr,
            )
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
