"""The deployment as the scheduler reads it: engines, members and their device requests.

Parsed once per schedule from ``spec.template.spec``; each request keeps its field path so a
selector that does not compile is reported where the user wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from modelplane.kube import objects
from modelplane.scheduling import placement as pl
from modelplane.scheduling.capacity import pod_count
from modelplane.scheduling.devices import DeviceKind, SelectorProblem, compile_selector
from modelplane.scheduling.devices import matches as selector_matches


@dataclass(frozen=True)
class Request:
    name: str
    count: int
    selectors: tuple[str, ...]
    path: str


@dataclass(frozen=True)
class Member:
    role: str
    pods: int
    requests: tuple[Request, ...]


@dataclass(frozen=True)
class Engine:
    name: str
    copies: int
    members: tuple[Member, ...]


def parse_engines(spec: dict[str, Any]) -> tuple[Engine, ...]:
    engines = []
    for e, engine in enumerate(spec.get("engines") or []):
        members = []
        for m, member in enumerate(engine.get("members") or []):
            requests = []
            devices = objects.dig(member, "nodeSelector", "devices") or []
            for d, device in enumerate(devices):
                base = f"spec.template.spec.engines[{e}].members[{m}].nodeSelector.devices[{d}]"
                selectors = tuple(
                    str(s["cel"]) for s in device.get("selectors") or [] if s.get("cel") is not None
                )
                count = int(device.get("count", 1))
                requests.append(Request(str(device.get("name", "")), count, selectors, base))
            role = str(member.get("role", "Standalone"))
            members.append(Member(role, pod_count(member), tuple(requests)))
        copies = int(engine.get("copies", 1))
        engines.append(Engine(str(engine.get("name", "")), copies, tuple(members)))
    return tuple(engines)


def selector_errors(
    engines: tuple[Engine, ...], kinds: list[DeviceKind]
) -> tuple[pl.SelectorError, ...]:
    errors = []
    for engine in engines:
        for member in engine.members:
            for request in member.requests:
                for s, text in enumerate(request.selectors):
                    compiled = compile_selector(text)
                    if isinstance(compiled, SelectorProblem):
                        problem: SelectorProblem | None = compiled
                    else:
                        found = (selector_matches((text,), k) for k in kinds)
                        problem = next((r for r in found if isinstance(r, SelectorProblem)), None)
                    if problem is not None:
                        path = f"{request.path}.selectors[{s}].cel"
                        errors.append(pl.SelectorError(request.name, path, problem.message))
    return tuple(errors)
