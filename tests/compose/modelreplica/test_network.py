"""A replica's ingress NetworkPolicies (compose/modelreplica/network.py): who reaches its
engines and its picker, read through tests/networkpolicy.py as the API defines the policies.

The peers are the serving stack's pods as its components run them (the namespaces and ports
are held to components.py here; the labels to Envoy Gateway's and prometheus-operator's
sources in tests/conformance/test_network_policy.py)."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from modelplane.compose import pods_revision
from modelplane.compose.inferencecluster import components
from modelplane.compose.inferencecluster.target import target_of
from modelplane.compose.modelreplica import network, picker
from modelplane.compose.modelreplica.context import ReplicaContext
from modelplane.compose.modelreplica.workloads import compose_workloads
from tests.networkpolicy import Pod, admits, pod_ports, selects
from tests.upstream_crds import upstream

from .support import (
    cluster,
    engine,
    leader,
    manifests,
    pod_labels,
    pod_specs,
    replica,
    run,
    standalone,
    worker,
    workload,
)

Obj = dict[str, Any]
KUBERNETES = "1.34"
NS = "team"
GANG_PORT = 29500
"""A port no rule names: torch.distributed's default rendezvous port."""

PROXY = {
    **network.ENVOY_PROXY_LABELS,
    network.OWNING_GATEWAY_NAME: "inference-gateway",
    network.OWNING_GATEWAY_NAMESPACE: "modelplane-system",
}
PROMETHEUS = {**network.PROMETHEUS_LABELS, "prometheus": "prometheus-prometheus"}


def composed(composite: Obj, on: Obj | None = None) -> tuple[list[Obj], dict[str, Obj]]:
    """The replica's two policies, and every manifest it composes by key."""
    found = manifests(run(composite, on=on or cluster()))
    return [found[k] for k in network.KEYS], found


def engine_pods(found: dict[str, Obj], name: str = "main") -> dict[str, Pod]:
    """Each member's pod of engine ``name`` as its workload's template makes it."""
    manifest = found[f"workload-{name}"]
    specs = pod_specs(manifest)
    return {
        role: Pod(NS, labels, pod_ports(specs[role]))
        for role, labels in pod_labels(manifest).items()
    }


def picker_pod(found: dict[str, Obj]) -> Pod:
    template = found[picker.DEPLOYMENT_KEY]["spec"]["template"]
    return Pod(NS, template["metadata"]["labels"], pod_ports(template["spec"]))


EPP = {"template": {"spec": {"containers": [{"name": "epp", "image": "example.com/epp:v1"}]}}}


def gang_replica(name: str = "r") -> Obj:
    return replica(engine("main", leader(), worker(nodes=2)), name=name)


def pd_replica() -> Obj:
    return replica(
        engine("p", phase="Prefill"),
        engine("d", phase="Decode"),
        serving={"mode": "PrefillDecode", "router": "EndpointPicker", "endpointPicker": EPP},
    )


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
@pytest.mark.parametrize("composite", [replica(), gang_replica(), pd_replica()])
def test_the_policies_pass_the_kubernetes_network_policy_schema(composite, stack):
    policies, _ = composed(composite, on=cluster(stack=stack))
    for policy in policies:
        kubernetes_validate.validate(policy, KUBERNETES, strict=True)


def test_each_policy_object_passes_the_provider_kubernetes_object_crd():
    result = run(replica())
    admission = upstream()
    for key in network.KEYS:
        assert [str(e) for e in admission.admit(result.resources[key].resource).errors] == []


def test_a_long_replica_name_still_names_valid_policies():
    policies, _ = composed(replica(name="x" * 50 + "-0123456789ab"))
    for policy in policies:
        kubernetes_validate.validate(policy, KUBERNETES, strict=True)
        assert len(policy["metadata"]["name"]) <= 63


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_the_engines_policy_selects_every_member_of_the_gang(stack):
    (engines, _), found = composed(gang_replica(), on=cluster(stack=stack))
    pods = engine_pods(found)
    assert set(pods) == {"leader", "worker"}
    assert all(selects(engines, pod) for pod in pods.values())


def test_the_engines_policy_selects_neither_the_picker_nor_another_replicas_engines():
    (engines, _), found = composed(replica(name="r"))
    _, other = composed(replica(name="s"))
    assert not selects(engines, picker_pod(found))
    assert not selects(engines, engine_pods(other)["standalone"])


def test_the_picker_policy_selects_the_pickers_and_no_engine():
    (_, epp), found = composed(replica())
    assert selects(epp, picker_pod(found))
    assert not selects(epp, engine_pods(found)["standalone"])


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_gang_members_reach_each_other_on_any_port(stack):
    policies, found = composed(gang_replica(), on=cluster(stack=stack))
    pods = engine_pods(found)
    assert admits(policies, pods["worker"], pods["leader"], GANG_PORT)
    assert admits(policies, pods["leader"], pods["worker"], GANG_PORT)


def test_a_decode_engine_reaches_its_prefill_engine_on_any_port():
    policies, found = composed(pd_replica())
    decode, prefill = engine_pods(found, "d")["standalone"], engine_pods(found, "p")["standalone"]
    assert admits(policies, decode, prefill, 5600)  # NIXL's side channel, say


def test_the_picker_reaches_its_engines():
    policies, found = composed(replica())
    assert admits(policies, picker_pod(found), engine_pods(found)["standalone"], 8000)


def test_an_engine_reaches_its_picker_for_kv_cache_events():
    policies, found = composed(replica())
    assert admits(policies, engine_pods(found)["standalone"], picker_pod(found), 5557)


def test_another_replicas_engine_in_the_namespace_reaches_neither_engines_nor_picker():
    policies, found = composed(replica(name="r"))
    _, other = composed(replica(name="s"))
    intruder = engine_pods(other)["standalone"]
    assert not admits(policies, intruder, engine_pods(found)["standalone"], 8000)
    assert not admits(policies, intruder, picker_pod(found), picker.EXT_PROC_PORT)


def test_a_pod_of_another_namespace_with_the_replicas_labels_is_refused():
    policies, found = composed(replica())
    own = engine_pods(found)["standalone"]
    impostor = Pod("other-tenant", own.labels)
    assert not admits(policies, impostor, own, 8000)
    assert not admits(policies, impostor, picker_pod(found), picker.EXT_PROC_PORT)


def test_the_gateway_reaches_the_engines_on_the_serving_port_only():
    policies, found = composed(replica(serving={"port": 9100}))
    proxy = Pod(components.EG_NAMESPACE, PROXY)
    pod = engine_pods(found)["standalone"]
    assert admits(policies, proxy, pod, 9100)
    assert not admits(policies, proxy, pod, GANG_PORT)


def test_the_gateway_reaches_the_picker_on_the_ext_proc_port_only():
    policies, found = composed(replica())
    proxy = Pod(components.EG_NAMESPACE, PROXY)
    assert admits(policies, proxy, picker_pod(found), picker.EXT_PROC_PORT)
    assert not admits(policies, proxy, picker_pod(found), picker.HEALTH_PORT)


def test_another_gateways_proxies_are_refused():
    policies, found = composed(replica())
    front = Pod(components.EG_NAMESPACE, {**PROXY, network.OWNING_GATEWAY_NAME: "front"})
    assert not admits(policies, front, engine_pods(found)["standalone"], 8000)


def test_the_gateway_the_cluster_publishes_is_the_one_admitted():
    on = cluster()
    on["status"]["gateway"] = {"name": "edge", "namespace": "gateways"}
    policies, found = composed(replica(), on=on)
    labels = {
        **PROXY,
        network.OWNING_GATEWAY_NAME: "edge",
        network.OWNING_GATEWAY_NAMESPACE: "gateways",
    }
    pod = engine_pods(found)["standalone"]
    assert admits(policies, Pod(components.EG_NAMESPACE, labels), pod, 8000)
    assert not admits(policies, Pod(components.EG_NAMESPACE, PROXY), pod, 8000)


def test_proxy_labels_outside_envoy_gateways_namespace_are_refused():
    policies, found = composed(replica())
    assert not admits(policies, Pod("anywhere", PROXY), engine_pods(found)["standalone"], 8000)


def test_an_external_envoy_gateways_proxies_are_admitted_from_any_namespace():
    on = cluster()
    on["spec"]["servingStack"] = {"envoyGateway": {"mode": "External"}}
    policies, found = composed(replica(), on=on)
    assert admits(policies, Pod("platform-gateways", PROXY), engine_pods(found)["standalone"], 8000)


@pytest.mark.parametrize("mode", ["Managed", "External"])
def test_a_tenants_pod_labelled_as_a_proxy_is_refused(mode):
    on = cluster()
    on["spec"]["servingStack"] = {"envoyGateway": {"mode": mode}}
    policies, found = composed(replica(name="r"), on=on)
    _, other = composed(replica(name="s", namespace=components.EG_NAMESPACE), on=on)
    spoof = engine_pods(other)["standalone"]
    spoof = Pod(components.EG_NAMESPACE, {**spoof.labels, **PROXY})
    assert not admits(policies, spoof, engine_pods(found)["standalone"], 8000)


def test_prometheus_scrapes_the_engines_on_the_metrics_port_only():
    policies, found = composed(replica())
    scraper = Pod("monitoring", PROMETHEUS)
    pod = engine_pods(found)["standalone"]
    assert pod.ports[network.ENGINE_METRICS_PORT] == 8000
    assert admits(policies, scraper, pod, 8000)
    assert not admits(policies, scraper, pod, GANG_PORT)


def test_prometheus_scrapes_the_picker_on_the_metrics_port_only():
    policies, found = composed(replica())
    scraper = Pod("monitoring", PROMETHEUS)
    assert admits(policies, scraper, picker_pod(found), picker.METRICS_PORT)
    assert not admits(policies, scraper, picker_pod(found), picker.EXT_PROC_PORT)


def test_an_external_prometheus_is_admitted_from_any_namespace():
    on = cluster()
    on["spec"]["servingStack"] = {"prometheus": {"mode": "External"}}
    policies, found = composed(replica(), on=on)
    assert admits(policies, Pod("observability", PROMETHEUS), picker_pod(found), 9090)


def test_any_other_pod_of_the_cluster_is_refused():
    policies, found = composed(replica())
    stranger = Pod("default", {"app": "curl"})
    assert not admits(policies, stranger, engine_pods(found)["standalone"], 8000)
    assert not admits(policies, stranger, picker_pod(found), picker.EXT_PROC_PORT)


def test_the_policies_restrict_ingress_only():
    policies, _ = composed(replica())
    assert [p["spec"]["policyTypes"] for p in policies] == [["Ingress"], ["Ingress"]]


def test_the_policies_bear_no_pods_so_the_pods_revision_is_unchanged():
    result = run(replica())
    assert not any(pods_revision.bears_pods(result.resources[k].resource) for k in network.KEYS)


def test_a_replica_held_at_another_pods_revision_gets_its_policies_at_once():
    held = replica()
    held["metadata"]["labels"] = {"modelplane.ai/deployment": "d"}
    held["metadata"]["annotations"] = {"modelplane.ai/pods-revision": "p-an-older-release"}
    running = run(held)
    observed = {k: d.resource for k, d in running.resources.items() if k not in network.KEYS}
    result = run(held, observed=observed)
    assert set(network.KEYS) <= set(result.resources)


def test_composing_the_policies_leaves_every_pod_template_as_it_was():
    composite = gang_replica()
    with_policies = manifests(run(composite))
    ctx = ReplicaContext(replica=composite, cluster=cluster(), provider_config="pc-c1", observed={})
    without = {k: o["spec"]["forProvider"]["manifest"] for k, o in compose_workloads(ctx).items()}
    assert {k: with_policies[k] for k in without} == without
    assert workload(run(composite)) == without["workload-main"]


# What the replica assumes of the serving stack, held to components.py (a replica may not import
# it, tests/test_layers.py).


def test_envoy_gateway_runs_in_the_namespace_the_policies_admit():
    assert network.ENVOY_GATEWAY_NAMESPACE == components.EG_NAMESPACE
    assert components.ENVOY_GATEWAY_COMPONENT.charts[0].namespace == components.EG_NAMESPACE


def test_the_stacks_envoy_gateway_runs_proxies_in_its_own_namespace():
    """No deploy type: Envoy Gateway's default, ControllerNamespace mode."""
    east = target_of({"metadata": {"name": "east"}, "spec": {}}, "east")
    values = components.ENVOY_GATEWAY_COMPONENT.values(east, None, None)  # type: ignore[arg-type]
    provider = values["config"]["envoyGateway"]["provider"]
    assert "deploy" not in (provider.get("kubernetes") or {})


def test_prometheus_runs_in_the_namespace_the_policies_admit():
    assert components.PROMETHEUS_STACK.charts[0].namespace == network.PROMETHEUS_NAMESPACE


def test_the_policies_open_the_ports_the_stacks_pod_monitors_scrape():
    _, found = composed(replica())
    assert network.ENGINE_METRICS_PORT == components.ENGINE_METRICS_PORT
    assert picker_pod(found).ports[components.PICKER_METRICS_PORT] == picker.METRICS_PORT


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_every_member_pod_carries_the_labels_the_policies_select(stack):
    composite = replica(engine("main", standalone()), gang_replica()["spec"]["engines"][0])
    composite["spec"]["engines"][1]["name"] = "gang"
    (engines, _), found = composed(composite, on=cluster(stack=stack))
    for name in ("main", "gang"):
        assert all(selects(engines, pod) for pod in engine_pods(found, name).values())
