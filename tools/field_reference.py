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

from modelplane import exits
from modelplane.fields import Field, Kind, kinds

ROOT = Path(__file__).resolve().parents[1]
APIS = ROOT / "apis"
OUT = ROOT / "docs" / "reference.md"


def reference() -> str:
    lines = [
        "# Field reference",
        "",
        "Generated from the XRDs under `apis/` by `tools/field_reference.py`; do not edit by hand.",
        "Each kind's fields in schema order: type, default, constraints, and the message of each",
        "validation rule on the field (what `modelplane validate` and the API server print).",
        "`modelplane fields <kind>.<field>` prints the same for one field, offline.",
        "",
    ]
    for kind in kinds(APIS):
        lines += _kind(kind)
    lines += _exit_codes()
    return "\n".join(lines).rstrip() + "\n"


def _kind(kind: Kind) -> list[str]:
    source = kind.source.relative_to(ROOT).as_posix()
    out = [f"## {kind.kind}", ""]
    out.append(f"`{kind.group}/{kind.version}`, {kind.scope}; defined in `{source}`.")
    out.append("")
    if kind.description:
        out += [kind.description, ""]
    out += [
        "| field | type | default | constraints and rules | description |",
        "|---|---|---|---|---|",
    ]
    out += [_row(field) for field in kind.root.walk()]
    out.append("")
    return out


def _exit_codes() -> list[str]:
    # The README shows the same table: both come from modelplane.exits (tests/docs holds them so).
    return [
        "## Exit codes",
        "",
        "The same for every command, and the same table as the README's (both written from one",
        "source).",
        "",
        *exits.table().splitlines(),
        "",
    ]


def _row(field: Field) -> str:
    default = f"`{field.default}`" if field.default else ""
    constraints = "; ".join(_cell(c) for c in field.constraints())
    return (
        f"| `{field.path}` | {field.type} | {default} | {constraints} | "
        f"{_cell(field.description)} |"
    )


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
