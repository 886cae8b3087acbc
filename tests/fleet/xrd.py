"""Admission of fleet objects through the project's XRDs, as the API server would admit them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from modelplane.kube.admission import Admission

Obj = dict[str, Any]
Mutation = Callable[[Obj], object]
APIS = Path(__file__).resolve().parents[2] / "apis"


@cache
def admission(plural: str) -> Admission:
    return Admission.from_paths([APIS / plural / "definition.yaml"])


def errors(plural: str, obj: Obj) -> list[str]:
    return [str(e) for e in admission(plural).admit(copy.deepcopy(obj)).errors]


def mutated(obj: Obj, mutate: Mutation) -> Obj:
    out = copy.deepcopy(obj)
    mutate(out)
    return out


def rule_error(path: str, message: str, value: str = "object") -> str:
    return f'{path}: Invalid value: "{value}": {message}'
