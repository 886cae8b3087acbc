"""A ModelDeployment's serving pods drain before they stop: its replicas are stamped with a
termination grace period and a preStop (spec.drain, defaults long enough for long generations),
which their pods carry; a ModelReplica written by hand keeps Kubernetes' defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from modelplane import labels, manifests
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_passes
from modelplane.simulate import simulate_observed
from tests.compose.modelreplica import support
from tests.compose.through import deployment_required, run
from tests.fleet.builders import deployment, fleet

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[3]


def stamped(md: Obj) -> dict[str, str]:
    rsp = run(md, {}, deployment_required(fleet("a")))
    [replica] = [o for o in rsp.resources.values() if o["kind"] == "ModelReplica"]
    return dict(replica["metadata"]["annotations"])


def engine_pods(example: str) -> list[Obj]:
    docs = [m.obj for m in manifests.load([str(ROOT / "examples" / example)])]
    out, _ = render_passes(
        default_registry(), docs, (), api_server_admission(), lambda d: simulate_observed(d, 1)
    )
    pods = []
    for doc in out:
        manifest = ((doc.get("spec") or {}).get("forProvider") or {}).get("manifest") or {}
        if manifest.get("kind") == "Deployment" and "epp" not in manifest["metadata"]["name"]:
            pods.append(manifest["spec"]["template"]["spec"])
    return pods


def test_replicas_are_stamped_with_ten_minutes_of_grace_and_thirty_seconds_of_pre_stop() -> None:
    annotations = stamped(deployment("qwen"))
    assert annotations[labels.TERMINATION_GRACE] == "600"
    assert annotations[labels.PRE_STOP_SECONDS] == "30"


def test_the_drain_is_configured_on_the_deployment() -> None:
    md = deployment("qwen")
    md["spec"]["drain"] = {"terminationGracePeriodSeconds": 3600, "preStopSeconds": 60}
    annotations = stamped(md)
    assert (annotations[labels.TERMINATION_GRACE], annotations[labels.PRE_STOP_SECONDS]) == (
        "3600",
        "60",
    )


def test_a_deployments_engine_pods_carry_the_grace_period_and_pre_stop() -> None:
    [pod] = engine_pods("service-overflow")
    assert pod["terminationGracePeriodSeconds"] == 600
    [engine] = [c for c in pod["containers"] if c["name"] == "engine"]
    assert engine["lifecycle"] == {"preStop": {"sleep": {"seconds": 30}}}


def test_a_hand_written_replicas_pods_keep_kubernetes_defaults() -> None:
    for pod in engine_pods("replica-sidecar"):
        assert "terminationGracePeriodSeconds" not in pod
        assert all("lifecycle" not in c for c in pod["containers"])


def drained_pods(*containers: Obj) -> list[Obj]:
    """The pod specs of a replica its deployment stamped with the default drain, whose member
    runs ``containers``."""
    mr = support.replica(support.engine("main", support.standalone(containers=list(containers))))
    mr["metadata"]["annotations"] = {labels.TERMINATION_GRACE: "600", labels.PRE_STOP_SECONDS: "30"}
    rsp = run(mr, {}, {"cluster": [support.cluster()]})
    assert rsp.fatal is None, rsp.fatal
    pods = []
    for obj in rsp.resources.values():
        manifest = obj["spec"].get("forProvider", {}).get("manifest") or {}
        if manifest.get("kind") == "Deployment" and "epp" not in manifest["metadata"]["name"]:
            pods.append(manifest["spec"]["template"]["spec"])
    return pods


SLEEP = {"sleep": {"seconds": 30}}


def test_a_sidecar_in_front_of_the_engine_sleeps_as_long_as_the_engine() -> None:
    sidecar = {"name": "proxy", "image": "example/proxy:1", "ports": [{"containerPort": 8000}]}
    [pod] = drained_pods(sidecar, {"name": "engine", "image": "vllm/vllm-openai:v0.23.0"})
    assert {c["name"]: c["lifecycle"]["preStop"] for c in pod["containers"]} == {
        "proxy": SLEEP,
        "engine": SLEEP,
    }


def test_a_container_s_own_lifecycle_is_kept_beside_the_sleep_and_its_own_pre_stop_wins() -> None:
    own = {"exec": {"command": ["/bin/drain"]}}
    engine = {"name": "engine", "image": "vllm/vllm-openai:v0.23.0"}
    engine["lifecycle"] = {"postStart": {"exec": {"command": ["/bin/warm"]}}}
    sidecar = {"name": "proxy", "image": "example/proxy:1", "lifecycle": {"preStop": own}}
    [pod] = drained_pods(sidecar, engine)
    by_name = {c["name"]: c["lifecycle"] for c in pod["containers"]}
    assert by_name["engine"] == {**engine["lifecycle"], "preStop": SLEEP}
    assert by_name["proxy"] == {"preStop": own}
