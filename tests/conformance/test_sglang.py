"""SGLang gangs and metrics as SGLang v0.5.5 reads what Modelplane composes.

Each gang pod of an example's LeaderWorkerSet is built as LeaderWorkerSet v0.9.0 builds it
(``tests/conformance/lws.py`` cites the files), its env and command line expanded as a kubelet
expands them, and the result parsed with SGLang's own flags (``tests/conformance/sglang.py``).
Read from github.com/sgl-project/sglang at tag v0.5.5 (unchanged from v0.5.2):

- python/sglang/srt/model_executor/model_runner.py ``init_torch_distributed``: the process
  group meets at ``tcp://<--dist-init-addr>``, or at ``tcp://127.0.0.1:<port>`` without it;
  each node's ranks follow from its ``--node-rank`` (0 when not given);
- python/sglang/srt/entrypoints/engine.py ``_launch_subprocesses``: every node, rank 0 as much
  as the others, starts ``tp_size / nnodes`` scheduler processes, one per GPU of the node;
  a node of rank 1 or more then serves only a health check, rank 0 the HTTP API;
- python/sglang/srt/entrypoints/http_server.py: ``/metrics`` is mounted
  (``add_prometheus_middleware``, python/sglang/srt/utils/common.py) only when
  ``server_args.enable_metrics``, and python/sglang/srt/metrics/collector.py declares the
  gauges ``sglang:num_queue_reqs`` and ``sglang:token_usage`` the picker scores on.
"""

from __future__ import annotations

from argparse import Namespace

import pytest

from modelplane.compose.modelreplica.composer import compose_replica
from tests.compose.modelreplica.support import example_inputs
from tests.conformance.expansion import command_line, environment
from tests.conformance.fleets import NAMES, rendered_fleet
from tests.conformance.lws import GroupPod, group_pods
from tests.conformance.sglang import server_args

Obj = dict
ENGINE_TYPE = "llm-d.ai/engine-type"


def _engine(template: Obj) -> Obj:
    return next(c for c in template["spec"]["containers"] if c["name"] == "engine")


def _args(template: Obj, pod: GroupPod | None = None) -> Namespace:
    """SGLang's arguments in a pod of the template (of a LeaderWorkerSet's group, with ``pod``),
    as its kubelet expands them."""
    engine = _engine(template)
    env = list(engine.get("env") or [])
    if pod is not None:
        env = pod.env(env)
    # Secrets (a Hugging Face token) hold no flag: leave them out rather than read them.
    env = [e for e in env if "secretKeyRef" not in (e.get("valueFrom") or {})]
    parsed = server_args(command_line(engine, environment(env, template["metadata"]["labels"])))
    assert parsed is not None, engine
    return parsed


def _fleet_gang() -> Obj:
    [gang] = rendered_fleet("example/fleet-gang").remote("LeaderWorkerSet")
    return gang.manifest


@pytest.mark.parametrize("group", [0, 1])
def test_each_node_of_the_fleet_gang_has_its_own_rank_from_zero(group: int) -> None:
    pods = group_pods(_fleet_gang(), group)
    ranks = [_args(template, pod).node_rank for pod, template in pods]
    assert ranks == list(range(len(pods)))
    assert {_args(template, pod).nnodes for pod, template in pods} == {len(pods)}


@pytest.mark.parametrize("group", [0, 1])
def test_every_node_of_the_fleet_gang_meets_at_its_own_groups_leader(group: int) -> None:
    pods = group_pods(_fleet_gang(), group)
    leader = pods[0][0].leader_address
    assert {_args(template, pod).dist_init_addr for pod, template in pods} == {f"{leader}:5000"}


def _sglang_pods(name: str) -> list[tuple[Obj, GroupPod | None]]:
    """A pod of each template of the fleet that the picker reads with SGLang's metric names:
    (template, the group's pod when it is a LeaderWorkerSet's)."""
    out: list[tuple[Obj, GroupPod | None]] = []
    for remote in rendered_fleet(name).remote():
        manifest = remote.manifest
        if manifest.get("kind") == "LeaderWorkerSet":
            out += [(t, p) for p, t in group_pods(manifest, 0)]
        elif manifest.get("kind") == "Deployment":
            out.append((manifest["spec"]["template"], None))
    return [(t, p) for t, p in out if t["metadata"].get("labels", {}).get(ENGINE_TYPE) == "sglang"]


@pytest.mark.parametrize("name", NAMES)
def test_every_sglang_engine_serves_the_metrics_its_picker_scores_on(name: str) -> None:
    for template, pod in _sglang_pods(name):
        assert _args(template, pod).enable_metrics, _engine(template)


def test_some_fleet_runs_an_sglang_engine() -> None:
    assert any(_sglang_pods(name) for name in NAMES)


def _standard_gang() -> tuple[Obj, dict[str, Obj]]:
    """The example's LeaderWorkerSet, and its ResourceClaimTemplates by name."""
    result = compose_replica(example_inputs("replica-gang-standard"))
    manifests = [d.resource["spec"]["forProvider"]["manifest"] for d in result.resources.values()]
    [lws] = [m for m in manifests if m["kind"] == "LeaderWorkerSet"]
    claims = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "ResourceClaimTemplate"}
    return lws, claims


def _claimed_gpus(template: Obj, claims: dict[str, Obj]) -> int:
    """The GPUs the pod's device claim asks for: none without one."""
    total = 0
    for ref in template["spec"].get("resourceClaims") or ():
        requests = claims[ref["resourceClaimTemplateName"]]["spec"]["spec"]["devices"]["requests"]
        total += sum(r["exactly"]["count"] for r in requests if r["name"] == "gpu")
    return total


def test_every_node_of_the_standard_gang_leader_too_claims_the_gpus_its_rank_runs() -> None:
    lws, claims = _standard_gang()
    for pod, template in group_pods(lws, 0):
        args = _args(template, pod)
        assert _claimed_gpus(template, claims) == args.tp_size // args.nnodes, pod
