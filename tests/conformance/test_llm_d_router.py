"""The endpoint picker Modelplane composes, against llm-d-router v0.10.0's own source.

Files read from github.com/llm-d/llm-d-router at tag v0.10.0 are named in each test.
"""

from __future__ import annotations

import pytest

from modelplane.compose.modelreplica.composer import compose_replica
from tests.compose.modelreplica.support import example_inputs
from tests.conformance.fleets import NAMES, rendered_fleet

Obj = dict


def _picker(example: str = "replica-seed") -> Obj:
    result = compose_replica(example_inputs(example))
    return result.resources["epp-deployment"].resource["spec"]["forProvider"]["manifest"]


def _args(example: str = "replica-seed") -> list[str]:
    return list(_picker(example)["spec"]["template"]["spec"]["containers"][0]["args"])


def test_tracing_is_turned_off_since_it_defaults_on():
    # pkg/epp/server/options.go: NewOptions sets Tracing: true, and cmd/epp/runner/runner.go
    # initialises an OTLP exporter whenever it is on.
    assert "--tracing=false" in _args()


def test_pickers_run_without_leader_election_so_each_one_is_ready():
    # cmd/epp/runner/health.go: with --ha-enable-leader-election, readiness passes only on the
    # leader; a rolling update of more than one replica (maxUnavailable 0) would never finish.
    picker = _picker()
    assert picker["spec"]["replicas"] > 1
    assert picker["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
    assert not [a for a in _args() if "ha-enable-leader-election" in a]


def _serving_labels(example: str) -> dict[str, str]:
    result = compose_replica(example_inputs(example))
    for key, desired in result.resources.items():
        manifest = desired.resource["spec"]["forProvider"]["manifest"]
        if key.startswith("workload-") and manifest["kind"] == "LeaderWorkerSet":
            return manifest["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"]
    raise AssertionError(f"{example} has no gang")


def test_sglang_pods_name_their_engine_type_for_the_metrics_extractor():
    # pkg/epp/framework/plugins/datalayer/extractor/metrics: the extractor reads the pod label
    # llm-d.ai/engine-type (mapping_registry.go) and falls back to vLLM's metric names when
    # it is absent; "sglang" is one of the default engineConfigs (factories.go).
    labels = _serving_labels("replica-gang-standard")
    assert labels["llm-d.ai/engine-type"] == "sglang"


def _pickers(name: str) -> list[Obj]:
    return [
        r.manifest
        for r in rendered_fleet(name).remote("Deployment")
        if r.manifest["spec"]["selector"]["matchLabels"].get("modelplane.ai/component")
        == "endpoint-picker"
    ]


@pytest.mark.parametrize("name", NAMES)
def test_every_picker_of_every_fleet_routes_on_its_own_and_traces_only_when_asked(
    name: str,
) -> None:
    for picker in _pickers(name):
        [epp] = picker["spec"]["template"]["spec"]["containers"]
        flags = [a.split("=", 1)[0].lstrip("-") for a in epp["args"]]
        assert "tracing" in flags, picker["metadata"]["name"]
        assert "ha-enable-leader-election" not in flags, picker["metadata"]["name"]
        assert picker["spec"]["replicas"] > 1


def _serving_pods(name: str) -> list[Obj]:
    out = []
    for kind in ("Deployment", "LeaderWorkerSet"):
        for r in rendered_fleet(name).remote(kind):
            spec = r.manifest["spec"]
            templates = (
                [spec["leaderWorkerTemplate"].get("leaderTemplate")]
                if kind == "LeaderWorkerSet"
                else [spec["template"]]
            )
            out += [
                t
                for t in templates
                if t and t["metadata"]["labels"].get("modelplane.ai/serving") == "true"
            ]
    return out


@pytest.mark.parametrize("name", NAMES)
def test_every_sglang_serving_pod_of_every_fleet_names_its_engine_type(name: str) -> None:
    for pod in _serving_pods(name):
        engine = next(c for c in pod["spec"]["containers"] if c["name"] == "engine")
        if "sglang" in engine["image"]:
            assert pod["metadata"]["labels"]["llm-d.ai/engine-type"] == "sglang"
