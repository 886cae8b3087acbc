"""Exit codes, the same for every command, and the one format every command's errors take.

A pipeline gates on these, and each says what the user must do: 0 success; 1 fix the input
(invalid, or naming something that does not exist: a class, a cluster, a cache, a service entry
selecting nothing; or a composition failed); 2 input that cannot be read, or a usage error
(click's own usage errors exit 2 too); 3 add capacity: everything rendered but a ModelDeployment
could not place every replica it asks for. ``CODES`` is the one table, per kind: the README
shows it and tools/field_reference.py writes it into docs/reference.md (a test holds both equal
to ``table()``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

OK = 0
INVALID = 1
UNREADABLE = 2
SHORT = 3


@dataclass(frozen=True)
class Code:
    """One exit code: what it means, and what raises it, per kind (the commands in brackets)."""

    code: int
    meaning: str
    raised: tuple[str, ...] = ()


CODES = (
    Code(OK, "success"),
    Code(
        INVALID,
        "input invalid, or a composition failed: fix the input",
        (
            "any kind the API server would refuse, a Fatal result, no object the command can act "
            "on (all)",
            "a `modelplane.ai` kind not defined, or a version not served (all)",
            "a device selector that does not compile or a malformed `quantity()` literal in it "
            "(`validate`)",
            "InferenceCluster: a node pool's `className` naming no InferenceClass (`render`, "
            "`routes`, `explain`)",
            "InferenceGateway: `clusterName` naming no InferenceCluster (`render`, `routes`)",
            "ModelDeployment: a device selector that does not compile, a `cache` naming no "
            "ModelCache in its namespace (`render`, `routes`, `explain` for the selector)",
            "ModelEndpoint: `clusterName` naming no InferenceCluster (`render`, `routes`)",
            "ModelService: an entry, or its only entry, selecting no ModelEndpoint and no "
            "ModelReplica (`render`, `routes`)",
            "`fields`: a kind or field the API definitions do not have",
        ),
    ),
    Code(
        UNREADABLE,
        "input unreadable, or a usage error",
        (
            "a missing file, malformed YAML, text that is not UTF-8, a bad option (all)",
            "the fleet-wide Prometheus not reached, refusing the query, or answering something "
            "that is not its API (`usage`)",
        ),
    ),
    Code(
        SHORT,
        "everything rendered, but a ModelDeployment could not place every replica it asks for: "
        "add capacity",
        (
            "ModelDeployment: `ReplicasScheduled` False for want of capacity (`render`, `routes`, "
            "`explain`)",
            "ModelService: an entry that selects nothing only because the deployment it selects "
            "placed no replica (`render`, `routes`)",
        ),
    ),
)
BOTH = "When both apply, 1 wins: a typo is fixed before capacity is counted."


def table() -> str:
    """``CODES`` as the Markdown table the README and docs/reference.md show, then ``BOTH``."""
    lines = ["| code | meaning | raised, by kind (commands) |", "|---|---|---|"]
    for c in CODES:
        raised = "; ".join(c.raised)
        lines.append(f"| `{c.code}` | {c.meaning} | {raised} |".replace("|  |", "| |"))
    return "\n".join([*lines, "", BOTH]) + "\n"


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
