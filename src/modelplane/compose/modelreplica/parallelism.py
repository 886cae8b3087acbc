"""Whether an engine's parallelism matches the GPUs its member claims.

A model's parallelism is written twice: in the engine's flags (vLLM's ``--tensor-parallel-size``
and ``--pipeline-parallel-size``, SGLang's ``--tp`` and ``--pp-size``) and in the devices its
member claims, per pod and, for a gang, times its nodes. When they disagree the engine either
fails at start (more ranks than GPUs) or leaves claimed GPUs idle (fewer): either way a user
pays for what does not serve. A warning, not a refusal: a flag may come from a script in the
image, and data parallelism (``--data-parallel-size``, ``--dp``) splits GPUs in ways the flags
alone do not say, so a member that sets it is not checked.

GPUs are the devices requested from NVIDIA's DRA DeviceClass (``gpu.nvidia.com``); a value
that is not a plain number (``$(TP)``) is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from modelplane.compose.modelreplica.labelsets import role_of
from modelplane.compose.modelreplica.pods import engine_container, member_spec
from modelplane.kube import objects
from modelplane.kube.objects import Obj

REASON = "ParallelismMismatch"
DRA_DEVICE_CLASS = "gpu.nvidia.com"
"""The DeviceClass the cluster's NVIDIA DRA driver installs (the InferenceCluster's stack names
the same: tests/compose/modelreplica/test_parallelism.py holds them equal)."""
TENSOR = ("--tensor-parallel-size", "-tp", "--tp", "--tp-size")
PIPELINE = ("--pipeline-parallel-size", "-pp", "--pp", "--pp-size")
DATA = ("--data-parallel-size", "-dp", "--dp", "--dp-size")


def parallelism_warnings(engines: Iterable[Obj], at: str = "spec") -> list[str]:
    """One ``path: message`` per member whose engine's tensor x pipeline size is not the GPUs
    its pod claims times the nodes of its gang."""
    out: list[str] = []
    for e, engine in enumerate(engines):
        members = list(engine.get("members") or ())
        gang = _gang_gpus(members)
        for j, member in enumerate(members):
            role = role_of(member)
            partner = _partner(members, role)
            words = _words(member_spec(member, partner))
            ranks = _ranks(words)
            if ranks is None:
                continue
            gpus = gang if role in ("Leader", "Worker") and gang is not None else _gpus(member)
            if gpus and ranks != gpus:
                out.append(f"{at}.engines[{e}].members[{j}]: {_message(ranks, gpus, role)}")
    return out


def _partner(members: list[Obj], role: str) -> Obj | None:
    other = {"Leader": "Worker", "Worker": "Leader"}.get(role)
    return next((m for m in members if role_of(m) == other), None)


def _gpus(member: Mapping[str, Any]) -> int:
    """GPUs one pod of the member claims."""
    return sum(
        int(r.get("count") or 1)
        for r in member.get("deviceRequests") or ()
        if r.get("deviceClassName") == DRA_DEVICE_CLASS
    )


def _gang_gpus(members: list[Obj]) -> int | None:
    """GPUs a whole gang claims (the leader's pod and each worker node's), None without one."""
    roles = {role_of(m): m for m in members}
    if "Leader" not in roles or "Worker" not in roles:
        return None
    nodes = int(objects.dig(roles["Worker"], "worker", "nodes") or 1)
    return _gpus(roles["Leader"]) + nodes * _gpus(roles["Worker"])


def _words(spec: Obj | None) -> list[str]:
    """The engine container's command and args, split as a shell splits a script's words."""
    engine = engine_container(spec)
    if engine is None:
        return []
    return [p for f in ("command", "args") for w in engine.get(f) or () for p in str(w).split()]


def _ranks(words: list[str]) -> int | None:
    """Tensor x pipeline size, or None when the flags do not say it plainly."""
    values = dict(_flags(words))
    if any(values.get(flag) not in (None, "1") for flag in DATA):
        return None
    tensor = next((values[f] for f in TENSOR if f in values), None)
    if tensor is None:
        return None
    pipeline = next((values[f] for f in PIPELINE if f in values), "1")
    if not (tensor.isdigit() and pipeline.isdigit()):
        return None
    return int(tensor) * int(pipeline)


def _flags(words: list[str]) -> Iterator[tuple[str, str]]:
    """(flag, value) for each ``--flag=value`` and ``--flag value`` of a parallelism flag."""
    known = (*TENSOR, *PIPELINE, *DATA)
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag not in known:
            continue
        if eq:
            yield flag, value.strip("'\"")
        elif i + 1 < len(words):
            yield flag, words[i + 1].strip("'\"")


def _message(ranks: int, gpus: int, role: str) -> str:
    scope = "its gang claims" if role in ("Leader", "Worker") else "its pod claims"
    effect = (
        "the engine will not start: it needs a GPU per rank"
        if ranks > gpus
        else f"{gpus - ranks} claimed GPU(s) stay idle"
    )
    return (
        f"the engine's tensor x pipeline parallel size is {ranks} but {scope} {gpus} GPU(s) "
        f"of DeviceClass {DRA_DEVICE_CLASS}: {effect}; make the flags and the device count agree"
    )
