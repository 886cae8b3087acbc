"""A shipped example copied and edited: the typo or change a test is about, in a real file, so
commands report it at its real file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def edited_example(
    tmp_path: Path, name: str, file: str, old: str, new: str, count: int = -1
) -> Path:
    """``examples/<name>`` under ``tmp_path`` with ``old`` replaced by ``new`` in ``file``."""
    root = tmp_path / name
    shutil.copytree(EXAMPLES / name, root)
    path = root / file
    text = path.read_text()
    assert old in text, (file, old)
    path.write_text(text.replace(old, new, count))
    return root
