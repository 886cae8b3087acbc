"""Write docs/troubleshooting.md's reason tables from src/modelplane/reasons.py.

Each kind's table sits between ``<!-- reasons KIND -->`` and ``<!-- /reasons -->``; the prose
around them is the page's own. By default it only checks, naming the page when it differs
(exit 1); ``--write`` rewrites the tables:

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


def table(kind: type[Kind]) -> str:
    """The kind's table, a row per reason in the order reasons.py declares them."""
    rows = (f"| `{r.reason}` | {r.condition} {r.status} | {r.means} | {r.do} |" for r in kind.ROWS)
    return HEADER + "".join(f"{line}\n" for line in rows)


def page(text: str) -> str:
    """The page with every kind's table written from reasons.py, its prose untouched."""
    kinds = {k.__name__: k for k in Kind.__subclasses__()}
    marked = [m[2] for m in _TABLE.finditer(text)]
    if missing := sorted(set(kinds) - set(marked)):
        raise ValueError(f"{PAGE.name} has no <!-- reasons KIND --> table for {missing}")
    if unknown := sorted(set(marked) - set(kinds)):
        raise ValueError(f"{PAGE.name} marks a table for {unknown}, no kind of reasons.py")
    return _TABLE.sub(lambda m: m[1] + table(kinds[m[2]]) + m[4], text)


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    want = page(text)
    if "--write" in argv:
        PAGE.write_text(want)
    elif text != want:
        print(f"{PAGE.relative_to(ROOT)}: its reason tables differ from reasons.py (--write)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
