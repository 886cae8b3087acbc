"""How Crossplane writes a function's composite status and conditions, and what a reader of a
ModelDeployment's ``RolledOut`` can trust.

crossplane/crossplane v2.3.4, internal/controller/apiextensions/composite:

- composition_functions.go, ``FunctionComposer.Compose``: once the composed resources are
  applied, the composite is replaced by the function's desired composite (``xfn.FromStruct``),
  the conditions it had when the reconcile read it are put back (``xr.SetConditions(cs...)``),
  and its status is server-side applied (``Status().Patch(..., client.Apply, ...)``). The
  function's conditions are not in that write: ``Compose`` returns them in
  ``CompositionResult.Conditions``.
- reconciler.go, ``Reconciler.Reconcile``: after the watches start and the connection details
  are published, ``handleCommonCompositionResult`` sets each of them (``xr.SetConditions``,
  with no ``ObservedGeneration``: only the system conditions go through ``MarkConditions``,
  which stamps one), and ``Status().Update`` writes them. An error between the writes returns,
  and the conditions wait for the next reconcile.

So between the two writes a reader sees the new reconcile's ``status.rollout`` (and its
``observedGeneration``) beside the ``RolledOut`` of the reconcile before. The e2e tier caught
one: a sample with ``observedGeneration`` at the edit and ``RolledOut`` Complete while one
replica of four ran the new image. The stand-in below plays the two writes on plain dicts as
those functions do (a model of them, not their code); the function under test is the real one.
"""

from __future__ import annotations

import copy
from typing import Any

from modelplane.compose.modeldeployment.rollout import described_generation
from tests.compose.modeldeployment.running import Running
from tests.compose.through import Response
from tests.fleet.builders import deployment, fleet

Obj = dict[str, Any]


def model(image: str, generation: int) -> Obj:
    out = deployment("qwen", replicas=4)
    out["metadata"]["generation"] = generation
    member = out["spec"]["template"]["spec"]["engines"][0]["members"][0]
    member["template"]["spec"]["containers"][0]["image"] = image
    return out


def status_applied(status: Obj, rsp: Response) -> Obj:
    """``Compose``'s write: the function's desired status, with the conditions as they were."""
    return {**copy.deepcopy(rsp.status), "conditions": copy.deepcopy(status["conditions"])}


def conditions_updated(status: Obj, rsp: Response) -> Obj:
    """``Reconcile``'s write: each of the function's conditions set by type."""
    out = copy.deepcopy(status)
    by_type = {c["type"]: c for c in out["conditions"]}
    for type_, (state, reason, message) in rsp.conditions.items():
        by_type[type_] = {"type": type_, "status": state, "reason": reason, "message": message}
    out["conditions"] = list(by_type.values())
    return out


def rolled_out(status: Obj) -> Obj:
    return next(c for c in status["conditions"] if c["type"] == "RolledOut")


def settled(running: Running, composite: Obj) -> Obj:
    """The composite's status once its rollout is Complete, both writes made."""
    status: Obj = {"conditions": []}
    for _ in range(4):
        rsp = running.reconcile(composite)
        status = conditions_updated(status_applied(status, rsp), rsp)
    assert rolled_out(status)["reason"] == "Complete"
    return status


def test_between_the_writes_rolled_out_names_the_generation_before_the_edit() -> None:
    running = Running(fleet("a", "b"))
    before = settled(running, model("vllm/vllm-openai:v1", generation=7))
    rsp = running.reconcile(model("vllm/vllm-openai:v2", generation=8))
    between = status_applied(before, rsp)
    assert between["rollout"]["observedGeneration"] == 8
    assert rolled_out(between)["reason"] == "Complete"
    assert described_generation(rolled_out(between)["message"]) == 7


def test_after_the_writes_rolled_out_names_the_edit() -> None:
    running = Running(fleet("a", "b"))
    before = settled(running, model("vllm/vllm-openai:v1", generation=7))
    rsp = running.reconcile(model("vllm/vllm-openai:v2", generation=8))
    after = conditions_updated(status_applied(before, rsp), rsp)
    assert described_generation(rolled_out(after)["message"]) == 8
    assert rolled_out(after)["reason"] == "Progressing"
