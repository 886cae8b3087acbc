"""Generated names fit, stay stable, and never collide across replicas, engines and members."""

from __future__ import annotations

import re

import pytest

from modelplane.compose.modelreplica.names import (
    GROVE_COMBINED_MAX,
    PODCLIQUESET_MAX,
    child_name,
    podcliqueset_name,
    workload_name,
)

from .support import cluster, engine, leader, manifests, replica, run, standalone, worker, workload

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
LONG_REPLICA = "r" * 62 + "x"  # a 63-character replica name, the longest a deployment yields
LONG_ENGINE = "e" * 63
# The one kind whose names may pass 63 characters: an InferenceObjective is named
# ``<pool>-priority-<value>`` (up to 75 characters), a name the fleet hop's Lua builds from the
# pool header, so it cannot carry the hash a cut name does. Kubernetes accepts it: the llm-d.ai
# CRD (llm-d-router v0.10.0, tests/upstream/crds/llm-d.ai_inferenceobjectives.yaml) leaves
# ``metadata`` unvalidated (``type: object``), so the API server holds a custom resource's name
# to a DNS subdomain, at most 253 characters.
NAME_LIMITS = {"InferenceObjective": 253}

# Names at and around every limit: 63-character replica and engine names, names that differ
# only past the cut, and names a label could not hold.
EDGE_CASES = [
    ("r", "main"),
    (LONG_REPLICA, LONG_ENGINE),
    (LONG_REPLICA, LONG_ENGINE[:-1] + "f"),
    ("a" * 253, "main"),
    ("qwen3.8b.eks", "Engine With Spaces/And_Slashes"),
]


def remote_names(composite, stack="Standard"):
    result = run(composite, on=cluster(stack=stack))
    return {key: m["metadata"]["name"] for key, m in manifests(result).items()}, result


@pytest.mark.parametrize(("replica_name", "engine_name"), EDGE_CASES)
@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_every_generated_name_is_a_dns_label_of_at_most_63(replica_name, engine_name, stack):
    composite = replica(engine(engine_name, leader(), worker()), name=replica_name)
    _names, result = remote_names(composite, stack)
    objects = [d.resource["metadata"]["name"] for d in result.resources.values()]
    remote = [(m["kind"], m["metadata"]["name"]) for m in manifests(result).values()]
    for kind, name in [*remote, *(("Object", n) for n in objects)]:
        assert len(name) <= NAME_LIMITS.get(kind, 63) and DNS_LABEL.fullmatch(name), name


@pytest.mark.parametrize(("replica_name", "engine_name"), EDGE_CASES)
def test_every_label_value_is_a_valid_label_value(replica_name, engine_name):
    composite = replica(engine(engine_name, leader(), worker()), name=replica_name)
    for manifest in manifests(run(composite)).values():
        for value in manifest["metadata"].get("labels", {}).values():
            assert len(value) <= 63
            assert re.fullmatch(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", value), value


@pytest.mark.parametrize(("replica_name", "engine_name"), EDGE_CASES)
def test_grove_names_fit_the_combined_45_character_budget(replica_name, engine_name):
    # Grove v0.1.0-alpha.11 sums the three names, without separators
    # (operator/internal/webhook/admission/pcs/validation/podcliqueset.go).
    composite = replica(engine(engine_name, leader(), worker(nodes=63)), name=replica_name)
    pcs = workload(run(composite, on=cluster(stack="Dynamo")), engine_name)
    name = pcs["metadata"]["name"]
    template = pcs["spec"]["template"]
    for group in template["podCliqueScalingGroups"]:
        for clique in group["cliqueNames"]:
            assert len(name) + len(group["name"]) + len(clique) <= GROVE_COMBINED_MAX
    assert len(name) <= PODCLIQUESET_MAX


def test_grove_pod_hostnames_fit_a_dns_label_at_the_largest_gang():
    # Grove names pods <pcs>-<pcs index>-<group>-<copy>-<clique>-<pod index>.
    pcs = podcliqueset_name(LONG_REPLICA, LONG_ENGINE)
    assert len(f"{pcs}-0-gang-63-worker63-0") <= 63


def test_names_differ_across_replicas_engines_and_members():
    def kinds_and_names(name):
        result = run(replica(engine("x", leader(), worker()), engine("y"), name=name))
        return [(m["kind"], m["metadata"]["name"]) for m in manifests(result).values()]

    all_names = kinds_and_names("a") + kinds_and_names("b")
    # The shared Namespace is the one name two replicas of a namespace must share.
    shared = [n for n in all_names if n == ("Namespace", "team")]
    assert len(shared) == 2
    # Names are unique per kind (the picker's objects of different kinds share one name).
    rest = [n for n in all_names if n != ("Namespace", "team")]
    assert len(rest) == len(set(rest))


def test_a_leaderworkerset_never_shares_its_name_with_a_service():
    for engine_name in ("epp", "pool", "route", "r", "main"):
        result = run(replica(engine(engine_name, leader(), worker())))
        found = manifests(result).values()
        services = {m["metadata"]["name"] for m in found if m["kind"] == "Service"}
        lws = {m["metadata"]["name"] for m in found if m["kind"] == "LeaderWorkerSet"}
        assert lws and not lws & services


def test_names_that_differ_only_past_the_cut_stay_distinct():
    a = workload_name(LONG_REPLICA, LONG_ENGINE)
    b = workload_name(LONG_REPLICA, LONG_ENGINE[:-1] + "f")
    assert a != b


def test_names_are_stable_and_readable():
    assert workload_name("qwen3-8b-eks-l4-0", "qwen3-8b") == workload_name(
        "qwen3-8b-eks-l4-0", "qwen3-8b"
    )
    assert workload_name("qwen3-8b-eks-l4-0", "qwen3-8b").startswith("qwen3-8b-eks-l4-0-qwen3-8b-")


def test_a_workload_never_takes_a_name_another_kind_would_use():
    # The LeaderWorkerSet's headless Service shares its name; routing's Services are named from
    # the same replica, so the kind is part of every hash.
    assert child_name("workload", "r", "epp") != child_name("service", "r", "epp")


def test_standalone_and_gang_engines_of_one_replica_get_distinct_claims():
    result = run(replica(engine("a", standalone()), engine("b", leader(), worker())))
    claims = [
        m["metadata"]["name"] for k, m in manifests(result).items() if k.startswith("claims-")
    ]
    assert len(claims) == 3 == len(set(claims))


# A StatefulSet's pods carry controller-revision-hash: <statefulset>-<hash of up to 10>, a label
# value (<= 63), so a StatefulSet longer than 52 characters never gets pods (kubernetes#64023).
# LeaderWorkerSet names its leader StatefulSet <lws> and each worker one <lws>-<group index>.
STATEFULSET_MAX = 63 - 1 - 10


@pytest.mark.parametrize(("replica_name", "engine_name"), EDGE_CASES)
def test_a_leaderworkerset_name_leaves_room_for_its_worker_statefulsets(replica_name, engine_name):
    composite = replica(engine(engine_name, leader(), worker(), copies=64), name=replica_name)
    lws = workload(run(composite), engine_name)["metadata"]["name"]
    assert len(f"{lws}-63") <= STATEFULSET_MAX, lws


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_names_that_become_service_names_start_with_a_letter(stack):
    # LeaderWorkerSet and Grove name headless Services after the workload, and the picker's
    # Service shares its objects' name; a Service name is a DNS-1035 label.
    composite = replica(engine("main", leader(), worker()), name="70b-chat-c1-0-1a2b3c4d")
    found = manifests(run(composite, on=cluster(stack=stack))).values()
    named = [m for m in found if m["kind"] in ("LeaderWorkerSet", "PodCliqueSet", "Service")]
    assert {m["kind"] for m in named} == {
        "LeaderWorkerSet" if stack == "Standard" else "PodCliqueSet",
        "Service",
    }
    for m in named:
        assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", m["metadata"]["name"]), m
