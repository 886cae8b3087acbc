"""Copy upstream CRDs into this folder with their schemas intact and their prose dropped.

    python tests/upstream/slim.py SOURCE_DIR

Every ``description`` whose value is text is removed (a property *named* description, whose
value is a schema, is kept); everything else is kept as upstream wrote it, in its order. The
tests validate composed objects against the result, so only what the API server checks matters.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent / "crds"


def slim(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: slim(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [slim(v) for v in node]
    return node


def main(source: str) -> None:
    for path in sorted(Path(source).glob("*.yaml")):
        docs = [slim(d) for d in yaml.safe_load_all(path.read_text()) if d is not None]
        text = yaml.safe_dump_all(docs, sort_keys=False, width=100)
        (HERE / path.name).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1])
