"""Routing and ModelServing end to end, through the ModelReplica composer."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane import labels, simulate
from modelplane.compose.modelreplica import routing
from modelplane.compose.modelreplica.composer import compose_replica
from modelplane.composer import Inputs, Result

from .support import (
    cluster,
    engine,
    leader,
    manifests,
    pod_labels,
    replica,
    run,
    serving_condition,
    worker,
)

Obj = dict[str, Any]

PICKER = {
    "router": "EndpointPicker",
    "endpointPicker": {
        "template": {
            "spec": {"containers": [{"name": "epp", "image": "registry.example.com/epp:v1"}]}
        }
    },
}


def pd(prefill: Obj, decode: Obj) -> Obj:
    return replica(prefill, decode, serving={"mode": "PrefillDecode", **PICKER})


def gang_engine(name: str, *, copies: int = 1, phase: str | None = None) -> Obj:
    return engine(name, leader(), worker(nodes=2), copies=copies, phase=phase)


def composed_replica(
    composite: Obj, *, on: Obj | None = None, observed: dict[str, Obj] | None = None
) -> Result:
    required = {"cluster": [on if on is not None else cluster()]}
    return compose_replica(Inputs(composite=composite, required=required, observed=observed or {}))


def observe(result: Result, copies: int) -> dict[str, Obj]:
    return simulate.simulate_observed({k: d.resource for k, d in result.resources.items()}, copies)


MODES = {
    "Unified": replica(engine("main", copies=2)),
    "Unified-with-router": replica(engine("main"), serving=PICKER),
    "PrefillDecode": pd(engine("p", phase="Prefill"), engine("d", copies=3, phase="Decode")),
}


@pytest.mark.parametrize("composite", MODES.values(), ids=MODES.keys())
def test_both_modes_compose_the_whole_routing_path(composite: Obj) -> None:
    assert set(routing.KEYS) <= set(run(composite).resources)


@pytest.mark.parametrize("composite", MODES.values(), ids=MODES.keys())
def test_pool_selects_every_serving_pod_and_no_worker(composite: Obj) -> None:
    objs = manifests(run(composite))
    selector = objs["inference-pool"]["spec"]["selector"]["matchLabels"].items()
    for key, manifest in objs.items():
        if key.startswith("workload-"):
            for role, pod in pod_labels(manifest).items():
                assert (selector <= pod.items()) == (role != "worker"), (key, role)


def test_picker_pods_are_not_in_the_pool() -> None:
    objs = manifests(run(MODES["Unified"]))
    selector = objs["inference-pool"]["spec"]["selector"]["matchLabels"].items()
    assert not selector <= objs["epp-deployment"]["spec"]["template"]["metadata"]["labels"].items()


# --- prefill/decode role labels -------------------------------------------------------------


def roles(result: Result, engine_name: str) -> dict[str, str | None]:
    return {
        role: pod.get(labels.LLMD_ROLE)
        for role, pod in pod_labels(manifests(result)[f"workload-{engine_name}"]).items()
    }


def test_prefill_decode_over_deployments_labels_each_phase() -> None:
    result = run(pd(engine("p", phase="Prefill"), engine("d", phase="Decode")))
    assert roles(result, "p") == {"standalone": "prefill"}
    assert roles(result, "d") == {"standalone": "decode"}


def test_roles_follow_phase_never_the_engine_name() -> None:
    result = run(pd(engine("decode", phase="Prefill"), engine("prefill", phase="Decode")))
    assert roles(result, "decode") == {"standalone": "prefill"}
    assert roles(result, "prefill") == {"standalone": "decode"}


@pytest.mark.parametrize(
    ("stack", "kind"), [("Standard", "LeaderWorkerSet"), ("Dynamo", "PodCliqueSet")]
)
def test_prefill_decode_over_gangs_labels_leaders_and_leaves_workers_alone(
    stack: str, kind: str
) -> None:
    composite = pd(gang_engine("p", phase="Prefill"), gang_engine("d", copies=2, phase="Decode"))
    result = run(composite, on=cluster(stack=stack))
    assert manifests(result)["workload-d"]["kind"] == kind
    assert roles(result, "p") == {"leader": "prefill", "worker": None}
    assert roles(result, "d") == {"leader": "decode", "worker": None}


def test_prefill_decode_mixing_a_gang_and_a_deployment() -> None:
    result = run(pd(engine("p", phase="Prefill"), gang_engine("d", phase="Decode")))
    assert roles(result, "p") == {"standalone": "prefill"}
    assert roles(result, "d") == {"leader": "decode", "worker": None}


def test_unified_pods_carry_no_role() -> None:
    assert roles(run(MODES["Unified"]), "main") == {"standalone": None}


def test_nothing_engine_specific_is_injected_into_engine_containers() -> None:
    composite = pd(engine("p", phase="Prefill"), engine("d", phase="Decode"))
    for key, manifest in manifests(run(composite)).items():
        if key.startswith("workload-"):
            [c] = manifest["spec"]["template"]["spec"]["containers"]
            assert c["image"] == "vllm/vllm-openai:v0.23.0"
            assert not any("NIXL" in e["name"] or "KV" in e["name"] for e in c.get("env", []))
            assert not any("kv-transfer" in a for a in c.get("args", []))


def test_prefill_decode_without_config_gets_the_disaggregating_picker_config() -> None:
    text = manifests(run(MODES["PrefillDecode"]))["epp-config"]["data"]["epp-config.yaml"]
    assert "disagg-profile-handler" in text


# --- names ----------------------------------------------------------------------------------

LONG = "m" * 50 + "-0123456789ab"
# The one kind whose names may pass 63 characters: an InferenceObjective is named
# ``<pool>-priority-<value>`` (up to 75 characters), a name the fleet hop's Lua builds from the
# pool header, so it cannot carry the hash a cut name does. Kubernetes accepts it: the llm-d.ai
# CRD (llm-d-router v0.10.0, tests/upstream/crds/llm-d.ai_inferenceobjectives.yaml) leaves
# ``metadata`` unvalidated (``type: object``), so the API server holds a custom resource's name
# to a DNS subdomain, at most 253 characters.
NAME_LIMITS = {"InferenceObjective": 253}


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_a_63_character_replica_gets_names_that_fit_and_never_collide(stack: str) -> None:
    composite = pd(gang_engine("p", phase="Prefill"), gang_engine("epp", phase="Decode"))
    composite["metadata"]["name"] = LONG
    assert len(LONG) == 63
    objs = manifests(run(composite, on=cluster(stack=stack)))
    names: dict[tuple[str, str], str] = {}
    for key, manifest in objs.items():
        name = manifest["metadata"]["name"]
        assert len(name) <= NAME_LIMITS.get(manifest["kind"], 63), key
        assert (manifest["kind"], name) not in names, (key, names.get((manifest["kind"], name)))
        names[(manifest["kind"], name)] = key
    # A LeaderWorkerSet makes a headless Service named like itself.
    workloads = {m["metadata"]["name"] for k, m in objs.items() if k.startswith("workload-")}
    services = {m["metadata"]["name"] for m in objs.values() if m["kind"] == "Service"}
    assert not workloads & services


# --- ModelServing through the composer ------------------------------------------------------

PD_DEPLOYMENTS = MODES["PrefillDecode"]


def test_first_reconcile_is_deploying() -> None:
    c = serving_condition(composed_replica(PD_DEPLOYMENTS))
    assert (c.status, c.reason) == ("False", "Deploying")


def test_no_ready_copy_names_the_engine() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    c = serving_condition(composed_replica(PD_DEPLOYMENTS, observed=observe(first, 0)))
    assert (c.status, c.reason) == ("False", "NoReadyCopy")
    assert c.message == "p, d have no ready copy: p: 0/1 copies ready, d: 0/3 copies ready"


def test_engines_ready_but_picker_unavailable_is_routing_not_ready() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    observed = observe(first, 1)
    observed["epp-deployment"] = simulate.observe(first.resources["epp-deployment"].resource, 0)
    c = serving_condition(composed_replica(PD_DEPLOYMENTS, observed=observed))
    assert (c.status, c.reason) == ("False", "RoutingNotReady")
    assert c.message.startswith("endpoint picker not available")


def test_one_ready_copy_each_is_serving_while_ready_waits_for_every_copy() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    result = composed_replica(PD_DEPLOYMENTS, observed=observe(first, 1))
    c = serving_condition(result)
    assert (c.status, c.reason) == ("True", "Serving")
    assert "d: 1/3 copies ready" in c.message
    assert result.resources["workload-d"].ready == "False"
    assert result.resources["workload-p"].ready == "True"


def test_every_copy_ready_marks_every_resource_ready() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    result = composed_replica(PD_DEPLOYMENTS, observed=observe(first, 3))
    assert {k: d.ready for k, d in result.resources.items()} == {
        k: "True" for k in result.resources
    }


def test_picker_gates_ready_like_every_other_resource() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    observed = observe(first, 3)
    observed["epp-deployment"] = simulate.observe(first.resources["epp-deployment"].resource, 0)
    assert (
        composed_replica(PD_DEPLOYMENTS, observed=observed).resources["epp-deployment"].ready
        == "False"
    )


def test_serving_starts_with_an_event() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    [event] = composed_replica(PD_DEPLOYMENTS, observed=observe(first, 1)).events
    assert (event.severity, event.reason) == ("Normal", "Serving")


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
@pytest.mark.parametrize(
    ("n", "status", "counted"), [(0, "False", "0/3"), (1, "True", "1/3"), (3, "True", "3/3")]
)
def test_gang_copies_are_counted_on_both_stacks(
    stack: str, n: int, status: str, counted: str
) -> None:
    composite = pd(gang_engine("p", phase="Prefill"), gang_engine("d", copies=3, phase="Decode"))
    on = cluster(stack=stack)
    first = composed_replica(composite, on=on)
    result = composed_replica(composite, on=on, observed=observe(first, n))
    c = serving_condition(result)
    assert c.status == status
    assert f"d: {counted} copies ready" in c.message
    assert (result.resources["workload-d"].ready == "True") == (
        n >= 1 if stack == "Dynamo" else n == 3
    )


def test_simulated_observed_state_reaches_a_fixed_point() -> None:
    first = composed_replica(PD_DEPLOYMENTS)
    second = composed_replica(PD_DEPLOYMENTS, observed=observe(first, 3))
    assert {k: d.resource for k, d in second.resources.items()} == {
        k: d.resource for k, d in first.resources.items()
    }


def test_simulated_grove_scaling_group_is_the_one_grove_would_create() -> None:
    composite = replica(gang_engine("main", copies=3))
    first = composed_replica(composite, on=cluster(stack="Dynamo"))
    gang = observe(first, 2)["gang-main"]
    remote = gang["status"]["atProvider"]["manifest"]
    pcs = manifests(first)["workload-main"]
    assert remote["metadata"]["name"] == f"{pcs['metadata']['name']}-0-gang"
    assert remote["spec"]["replicas"] == 3
    assert remote["status"]["availableReplicas"] == 2
    assert (
        next(c for c in gang["status"]["conditions"] if c["type"] == "Ready")["status"] == "False"
    )
