"""The over-gRPC fleet bench builds the fleets it says and resolves requirements as Crossplane
does; run here in process (the bench itself calls real servers of two codes)."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_grpc_fleet as bench
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from modelplane.compose.registry import default_registry
from modelplane.function import FunctionRunner

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def rendered(example: str) -> list[Obj]:
    return bench.render(
        bench.Code("new", ROOT / "src", bench.DEFAULT_RECV_MIB), ROOT / "examples" / example
    )


def replica(name: str, namespace: str, labels: dict[str, str]) -> Obj:
    meta = {"name": name, "namespace": namespace, "labels": labels}
    return {"apiVersion": bench.API_VERSION, "kind": "ModelReplica", "metadata": meta}


def test_a_label_selector_lists_every_namespace_ordered_by_namespace_and_name() -> None:
    fleet = bench.Fleet.of(
        [replica("b", "ns2", {"x": "1"}), replica("a", "ns2", {"x": "1"}), replica("c", "ns1", {})]
    )
    selector = fnv1.ResourceSelector(api_version=bench.API_VERSION, kind="ModelReplica")
    selector.match_labels.SetInParent()
    names = [s["metadata"]["name"] for s in fleet.matching(selector)]
    assert names == ["c", "a", "b"]
    selector.match_labels.labels["x"] = "1"
    selector.namespace = "ns2"
    assert [s["metadata"]["name"] for s in fleet.matching(selector)] == ["a", "b"]


def test_a_name_selector_lists_the_one_object_of_that_name() -> None:
    fleet = bench.Fleet.of([replica("a", "ns1", {}), replica("b", "ns1", {})])
    selector = fnv1.ResourceSelector(
        api_version=bench.API_VERSION, kind="ModelReplica", match_name="b", namespace="ns1"
    )
    assert [s["metadata"]["name"] for s in fleet.matching(selector)] == ["b"]


def test_the_fleet_clones_the_rendered_clusters_with_four_other_replicas_on_each() -> None:
    objects = bench.cloned_fleet(rendered("fleet-two-classes"), 5, bench.other_replicas)
    clusters = [o["metadata"]["name"] for o in objects if o["kind"] == "InferenceCluster"]
    assert clusters == ["eu-west", "us-east", "c00002", "c00003", "c00004"]
    replicas = [o for o in objects if o["kind"] == "ModelReplica"]
    assert len(replicas) == 5 * bench.PER_CLUSTER
    assert {r["metadata"]["labels"]["modelplane.ai/deployment"] for r in replicas} == {
        f"other-{k}" for k in range(bench.PER_CLUSTER)
    }
    assert {r["spec"]["clusterName"] for r in replicas} == set(clusters)


def test_a_scale_up_resolves_in_two_calls_and_its_steady_state_observes_what_it_placed() -> None:
    runner = FunctionRunner(default_registry())
    cases = bench.cases(runner.run, rendered("fleet-two-classes"), bench.SCENARIOS["deployment"], 6)
    assert list(cases) == ["scale-up", "steady"]
    assert cases["scale-up"].calls == 2
    up = fnv1.RunFunctionRequest.FromString(cases["scale-up"].request)
    assert len(up.required_resources["inference-clusters"].items) == 6
    assert not up.observed.resources
    steady = fnv1.RunFunctionRequest.FromString(cases["steady"].request)
    observed = [k for k in steady.observed.resources if k.startswith("replica-")]
    assert len(observed) == bench.SCALE_UP_REPLICAS
    # Its replicas and, now that they serve, their endpoints.
    assert (cases["scale-up"].desired, cases["steady"].desired) == (3, 6)


def test_the_counted_worker_answers_the_request_as_a_server_worker_does(tmp_path: Path) -> None:
    runner = FunctionRunner(default_registry())
    case = bench.cases(runner.run, rendered("fleet-two-classes"), bench.SCENARIOS["deployment"], 6)
    path = tmp_path / "steady.bin"
    path.write_bytes(case["steady"].request)
    answer = bench.count_worker(path, skip=False)
    assert answer is not None
    rsp = fnv1.RunFunctionResponse.FromString(answer)
    assert rsp.meta.tag == "counted"
    assert not [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert len(rsp.desired.resources) == case["steady"].desired
    assert bench.count_worker(path, skip=True) is None


def test_the_instruction_report_sets_their_growth_beside_the_bytes(capsys: Any) -> None:
    counts = {
        ("steady", 1000): {"Ir": 280_000_000, "ILmr": 1, "DLmr": 100_000, "DLmw": 39_999},
        ("steady", 10000): {"Ir": 2_660_000_000, "ILmr": 10, "DLmr": 3_000_000, "DLmw": 1_499_990},
    }
    sizes = {("steady", 1000): 4_000_000, ("steady", 10000): 40_000_000}
    bench.print_counts([1000, 10000], counts, sizes, cache_sim=False)
    plain = capsys.readouterr().out.splitlines()
    assert (
        plain[-1] == "growth 1000 -> 10000 clusters (x10), steady: bytes x10.00, instructions x9.50"
    )
    bench.print_counts([1000, 10000], counts, sizes, cache_sim=True)
    simulated = capsys.readouterr().out.splitlines()
    assert simulated[-1].endswith("instructions x9.50, last-level misses x32.14")
    assert "0.14 M last-level misses" in simulated[0]
