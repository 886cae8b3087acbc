"""Stamping a placed replica into a ModelReplica: the template verbatim, placement resolved."""

from __future__ import annotations

import copy

from modelplane.compose.modeldeployment.stamp import replica_key, replica_name, stamp
from modelplane.scheduling.placement import (
    DeviceRequest,
    EnginePlacement,
    MemberPlacement,
    ReplicaPlacement,
)
from tests.fleet.builders import GPU_SELECTOR, deployment, engine, member

GPU = DeviceRequest("gpu", count=2, device_class_name="gpu.nvidia.com", selectors=(GPU_SELECTOR,))


def placed(*engines: EnginePlacement, cluster: str = "east", index: int = 0) -> ReplicaPlacement:
    return ReplicaPlacement(index=index, cluster=cluster, engines=engines)


def standalone(pool: str = "h100", *requests: DeviceRequest) -> EnginePlacement:
    return EnginePlacement("main", (MemberPlacement("Standalone", pool, requests or (GPU,)),))


def test_member_keeps_every_template_field_and_trades_node_selector_for_the_placement() -> None:
    md = deployment()
    mr = stamp(md, placed(standalone()), "qwen-east-0")
    template_member = md["spec"]["template"]["spec"]["engines"][0]["members"][0]
    stamped = mr["spec"]["engines"][0]["members"][0]
    assert {k: v for k, v in stamped.items() if k not in ("nodePoolName", "deviceRequests")} == {
        k: v for k, v in template_member.items() if k != "nodeSelector"
    }
    assert stamped["nodePoolName"] == "h100"
    assert stamped["deviceRequests"] == [
        {
            "name": "gpu",
            "deviceClassName": "gpu.nvidia.com",
            "count": 2,
            "selectors": [{"cel": GPU_SELECTOR}],
        }
    ]


def test_a_member_that_claims_nothing_omits_device_requests() -> None:
    leader = member("Leader")
    del leader["nodeSelector"]
    worker = member("Worker")
    worker["worker"] = {"nodes": 2}
    md = deployment("gang", engine("main", leader, worker))
    where = EnginePlacement(
        "main", (MemberPlacement("Leader", "big", ()), MemberPlacement("Worker", "big", (GPU,)))
    )
    members = stamp(md, placed(where), "gang-east-0")["spec"]["engines"][0]["members"]
    assert members[0]["nodePoolName"] == "big"
    assert "deviceRequests" not in members[0]
    assert members[1]["worker"] == {"nodes": 2}


def test_replica_carries_cluster_serving_and_cache_from_the_template() -> None:
    md = deployment(serving={"mode": "Unified", "port": 8080})
    md["spec"]["template"]["spec"]["modelCacheRef"] = {"name": "qwen-weights"}
    spec = stamp(md, placed(standalone()), "n")["spec"]
    assert spec["clusterName"] == "east"
    assert spec["serving"] == {"mode": "Unified", "port": 8080}
    assert spec["modelCacheRef"] == {"name": "qwen-weights"}
    assert "clusterSelector" not in spec and "tolerations" not in spec


def test_replica_is_labelled_for_deployment_namespace_cluster_and_index() -> None:
    mr = stamp(deployment(), placed(standalone(), cluster="west", index=3), "n")
    assert mr["metadata"]["namespace"] == "ml"
    assert mr["metadata"]["labels"] == {
        "app": "qwen",
        "modelplane.ai/deployment": "qwen",
        "modelplane.ai/deployment-namespace": "ml",
        "modelplane.ai/cluster": "west",
        "modelplane.ai/replica-index": "3",
    }


def test_engine_fields_pass_through_and_engines_keep_template_order() -> None:
    md = deployment(
        "pd",
        engine("prefill", copies=2, phase="Prefill"),
        engine("decode", copies=1, phase="Decode"),
    )
    where = placed(
        EnginePlacement("decode", (MemberPlacement("Standalone", "big", (GPU,)),)),
        EnginePlacement("prefill", (MemberPlacement("Standalone", "small", (GPU,)),)),
    )
    engines = stamp(md, where, "n")["spec"]["engines"]
    assert [(e["name"], e["copies"], e["phase"]) for e in engines] == [
        ("prefill", 2, "Prefill"),
        ("decode", 1, "Decode"),
    ]
    assert [e["members"][0]["nodePoolName"] for e in engines] == ["small", "big"]


def test_stamping_does_not_alter_the_deployment() -> None:
    md = deployment()
    before = copy.deepcopy(md)
    stamp(md, placed(standalone()), "n")
    assert md == before


def test_names_and_keys_differ_by_cluster_and_index_and_fit_a_dns_label() -> None:
    md = deployment("a-very-long-model-deployment-name-that-keeps-going-and-going-on")
    spots = [placed(standalone(), cluster=c, index=i) for c in "ab" for i in (0, 1)]
    names = {replica_name(md, p) for p in spots}
    assert len(names) == 4
    assert all(len(n) <= 63 for n in names)
    assert replica_key(0, "a") != replica_key(0, "b")


def test_same_named_deployments_in_two_namespaces_get_distinct_replica_names() -> None:
    spot = placed(standalone(), cluster="east", index=0)
    names = {replica_name(deployment("qwen", namespace=ns), spot) for ns in ("a", "b")}
    assert len(names) == 2
