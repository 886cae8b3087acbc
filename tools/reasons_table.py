"""Write docs/troubleshooting.md's reason tables from src/modelplane/reasons.py.

Each kind's table sits between ``<!-- reasons KIND -->`` and ``<!-- /reasons -->``. The code
decides which reasons a table lists, in what order, and under which condition and status; what
each means and what to do is the page's own prose, kept by reason (a row the code no longer
declares goes, a new one comes with both cells empty). By default it only checks, naming the page
when it differs or a reason it does not explain (exit 1); ``--write`` rewrites the tables:

    uv run python tools/reasons_table.py --write
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from modelplane.reasons import Kind

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "troubleshooting.md"
HEADER = "| reason | condition | means | do |\n|---|---|---|---|\n"
_TABLE = re.compile(r"(<!-- reasons (\w+) -->\n)(.*?)(<!-- /reasons -->)", re.DOTALL)
# A prose cell may hold an escaped pipe (``\|``), as Markdown tables write one.
_CELL = r"((?:\\.|[^|\\])*)"
_ROW = re.compile(rf"^\| `(\w+)` \| [^|]* \| {_CELL} \| {_CELL} \|$", re.MULTILINE)


def table(kind: type[Kind], written: str) -> str:
    """The kind's table, a row per reason in the order reasons.py declares them, each with the
    prose the table as written gives it."""
    prose = {m[1]: (m[2], m[3]) for m in _ROW.finditer(written)}
    rows = (
        f"| `{r.reason}` | {r.condition} {r.status} | {' | '.join(prose.get(r.reason, ('', '')))} |"
        for r in kind.ROWS
    )
    return HEADER + "".join(f"{line}\n" for line in rows)


def page(text: str) -> str:
    """The page with every kind's table written from reasons.py, its prose untouched."""
    kinds = {k.__name__: k for k in Kind.__subclasses__()}
    marked = [m[2] for m in _TABLE.finditer(text)]
    if missing := sorted(set(kinds) - set(marked)):
        raise ValueError(f"{PAGE.name} has no <!-- reasons KIND --> table for {missing}")
    if unknown := sorted(set(marked) - set(kinds)):
        raise ValueError(f"{PAGE.name} marks a table for {unknown}, no kind of reasons.py")
    return _TABLE.sub(lambda m: m[1] + table(kinds[m[2]], m[3]) + m[4], text)


def unexplained(text: str) -> list[str]:
    """The reasons whose row says nothing of what it means or what to do."""
    return [m[1] for m in _ROW.finditer(text) if not m[2].strip() or not m[3].strip()]


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    want = page(text)
    if "--write" in argv:
        PAGE.write_text(want)
    elif text != want:
        print(f"{PAGE.relative_to(ROOT)}: its reason tables differ from reasons.py (--write)")
        return 1
    if empty := unexplained(want):
        print(f"{PAGE.relative_to(ROOT)}: say what these reasons mean and what to do: {empty}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
