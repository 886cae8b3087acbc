"""Exit codes, the same for every command, and the one format every command's errors take.

A pipeline gates on these, and each says what the user must do: 0 success; 1 fix the input
(invalid, or naming something that does not exist: a class, a cluster, a cache, a service entry
selecting nothing; or a composition failed); 2 input that cannot be read, or a usage error
(click's own usage errors exit 2 too); 3 add capacity: everything rendered but a ModelDeployment
could not place every replica it asks for. The table, per kind, is the README's.
"""

from __future__ import annotations

import sys
from typing import TextIO

OK = 0
INVALID = 1
UNREADABLE = 2
SHORT = 3

HELP = """\b
Exit codes (the same for every command):
  0  success
  1  input invalid, or a composition failed: fix the input (a name that
     points at nothing, a selector that selects nothing)
  2  input unreadable, or a usage error
  3  rendered, but a ModelDeployment could not place every replica it asks for
     (render, routes, explain): add capacity
"""


def error(command: str, message: str, stream: TextIO | None = None) -> None:
    """``modelplane <command>: <message>`` on stderr; messages about input start with
    ``<file>:<line>:``."""
    print(f"modelplane {command}: {message}", file=stream or sys.stderr)
