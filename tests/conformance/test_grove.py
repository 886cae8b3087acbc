"""Gang wiring on Grove v0.1.0-alpha.11 resolves as a kubelet would resolve it.

Each pod of the example's PodCliqueSet is built as Grove builds it at that tag (names, labels,
and its GROVE_* variables appended after the template's env: ``tests/conformance/grove.py``
cites the files), then its env and command line are expanded as Kubernetes expands them.
"""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica.composer import compose_replica
from tests.compose.inferencecluster.test_wiring import Rendered
from tests.compose.modelreplica.support import example_inputs
from tests.conformance.expansion import command_line, environment
from tests.conformance.grove import GangPod

Obj = dict


def _podcliqueset() -> Obj:
    result = compose_replica(example_inputs("replica-gang-dynamo"))
    manifest = result.resources["workload-llama-405b"].resource["spec"]["forProvider"]["manifest"]
    assert manifest["kind"] == "PodCliqueSet"
    return manifest


def _pods(pcs: Obj) -> list[tuple[GangPod, Obj, Obj]]:
    """Every (pod, clique, engine container) of every gang the example asks for."""
    template = pcs["spec"]["template"]
    (group,) = template["podCliqueScalingGroups"]
    cliques = {c["name"]: c for c in template["cliques"]}
    out = []
    for copy in range(group["replicas"]):
        for name in group["cliqueNames"]:
            clique = cliques[name]
            for index in range(clique["spec"]["replicas"]):
                pod = GangPod(
                    pcs["metadata"]["name"],
                    pcs["metadata"]["namespace"],
                    group["name"],
                    copy,
                    name,
                    index,
                    group["minAvailable"],
                )
                engine = next(
                    c for c in clique["spec"]["podSpec"]["containers"] if c["name"] == "engine"
                )
                out.append((pod, clique, engine))
    return out


def _environ(pod: GangPod, clique: Obj, engine: Obj, group_pods: int) -> dict[str, str]:
    return environment(pod.env(engine.get("env") or [], group_pods), pod.labels(clique["labels"]))


def _leader(pods: list[tuple[GangPod, Obj, Obj]], copy: int) -> GangPod:
    (leader,) = [p for p, _, _ in pods if p.copy == copy and p.clique == "leader"]
    return leader


def test_every_gang_pod_resolves_the_leader_address_of_its_own_gang():
    pods = _pods(_podcliqueset())
    for pod, clique, engine in pods:
        env = _environ(pod, clique, engine, len(pods))
        assert env["MODELPLANE_LEADER_ADDRESS"] == _leader(pods, pod.copy).fqdn, pod


def test_ranks_within_each_gang_are_zero_for_the_leader_then_one_per_worker():
    pods = _pods(_podcliqueset())
    copies = {p.copy for p, _, _ in pods}
    assert copies == {0, 1}
    for copy in copies:
        gang = [(p, c, e) for p, c, e in pods if p.copy == copy]
        ranks = {p.clique: _environ(p, c, e, len(gang))["MODELPLANE_RANK"] for p, c, e in gang}
        assert ranks["leader"] == "0"
        assert sorted(int(r) for r in ranks.values()) == list(range(len(gang)))
        sizes = {_environ(p, c, e, len(gang))["MODELPLANE_GANG_SIZE"] for p, c, e in gang}
        assert sizes == {str(len(gang))}


def test_the_examples_worker_dials_its_leader_on_the_command_line():
    pods = _pods(_podcliqueset())
    for pod, clique, engine in pods:
        if pod.clique == "leader":
            continue
        words = command_line(engine, _environ(pod, clique, engine, len(pods)))
        assert f"--address={_leader(pods, pod.copy).fqdn}:6379" in words[-1], words


@pytest.mark.parametrize(
    "reference", ["$(GROVE_PCSG_NAME)", "$(GROVE_PCSG_INDEX)", "$(GROVE_HEADLESS_SERVICE)"]
)
def test_a_template_variable_cannot_read_grove_variables(reference):
    # AddEnvVarsToContainers appends: Grove's variables come after the template's, so a
    # reference to them in the template's env is never expanded (grove#753 is unreleased).
    pod = GangPod("pcs", "ns", "gang", 0, "leader")
    env = pod.env([{"name": "ADDRESS", "value": reference}], 2)
    assert environment(env, pod.labels({}))["ADDRESS"] == reference


def test_the_spread_narrows_to_each_gang_by_a_label_one_gang_alone_carries():
    pcs = _podcliqueset()
    pods = _pods(pcs)
    for pod, clique, _ in pods:
        [term] = clique["spec"]["podSpec"]["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        [key] = term["matchLabelKeys"]
        mine = pod.labels(clique["labels"])
        assert term["labelSelector"]["matchLabels"].items() <= mine.items()
        gang = {p for p, c, _ in pods if p.labels(c["labels"]).get(key) == mine[key]}
        assert {p.copy for p in gang} == {pod.copy}, pod
        assert len(gang) == len(pods) // 2


def test_the_engines_pod_monitor_selects_grove_serving_pods_by_labels_grove_keeps():
    # The pod's labels are the clique's with Grove's own assigned over them
    # (podcliquescalinggroup/components/podclique/podclique.go getLabels): managed-by becomes
    # grove-operator, so a selector on managed-by: modelplane would miss every Grove pod.
    monitor = Rendered("replica-gang-dynamo").stack_manifest("podmonitor-engines")
    selector = monitor["spec"]["selector"]["matchLabels"]
    pods = _pods(_podcliqueset())
    for pod, clique, _ in pods:
        labels = pod.labels(clique["labels"])
        serving = labels.get("modelplane.ai/serving") == "true"
        assert (selector.items() <= labels.items()) == serving, pod
