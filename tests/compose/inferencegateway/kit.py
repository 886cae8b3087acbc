"""A gateway's shards, run as Crossplane runs a nested composite: each composed by its own
composer, its Objects observed as the simulated cluster reports them, and the shard observed
Ready exactly when its composer says so."""

from __future__ import annotations

from typing import Any

from modelplane.compose.inferencegateway.composer import compose_gateway
from modelplane.compose.inferencegateway.shard import compose_shard
from modelplane.compose.inferencegateway.shards import KIND, SHARD
from modelplane.composer import Inputs, Result
from modelplane.simulate import simulate_observed

Obj = dict[str, Any]


def shard_results(result: Result, settled: bool = True) -> dict[str, Result]:
    """Each shard the gateway composed, composed (``settled``: again, its Objects observed)."""
    out = {}
    for key, desired in sorted(result.resources.items()):
        if desired.resource.get("kind") != KIND:
            continue
        first = compose_shard(Inputs(composite=desired.resource))
        if not settled:
            out[key] = first
            continue
        seen = simulate_observed({k: d.resource for k, d in first.resources.items()}, 1)
        out[key] = compose_shard(Inputs(composite=desired.resource, observed=seen))
    return out


def hops(result: Result) -> dict[str, Obj]:
    """Every hop Object the gateway's shards compose, by the shard's key (``backend/<c>``)."""
    return {
        k: d.resource for r in shard_results(result, False).values() for k, d in r.resources.items()
    }


def hop_manifests(result: Result) -> dict[str, Obj]:
    return {k: o["spec"]["forProvider"]["manifest"] for k, o in hops(result).items()}


def observed_shard(shard: Obj, ready: bool, reached: list[str] | None = None) -> Obj:
    """A shard as Crossplane reports it after its reconcile: the clusters whose hops it reports
    ``reached`` (by default every one of a Ready shard, none of another)."""
    targets = (shard.get("spec") or {}).get("targets") or []
    if reached is None:
        reached = [t["cluster"] for t in targets] if ready else []
    status = "True" if ready else "False"
    return {
        **shard,
        "status": {
            "conditions": [{"type": "Ready", "status": status}],
            "clusters": len(targets),
            "reached": sorted(reached),
        },
    }


def observed_with_shards(result: Result) -> dict[str, Obj]:
    """What the gateway's next reconcile observes: its Objects as the simulated cluster reports
    them, each shard Ready once its own Objects are."""
    out = simulate_observed(
        {k: d.resource for k, d in result.resources.items() if not k.startswith(SHARD)}, 1
    )
    for key, shard in shard_results(result).items():
        out[key] = observed_shard(
            result.resources[key].resource, shard.ready == "True", shard.status["reached"]
        )
    return out


def again_with_shards(inputs: Inputs, result: Result) -> Result:
    """The gateway's next reconcile of the same inputs, ``result``'s resources observed."""
    return compose_gateway(
        Inputs(
            composite=inputs.composite,
            required=inputs.required,
            observed=observed_with_shards(result),
        )
    )
