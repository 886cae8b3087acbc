"""Builders and runners shared by the InferenceCluster composition tests."""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

from modelplane.compose.inferencecluster.composer import (
    CLASS_BY_NAME,
    CLASSES,
    GATEWAYS,
    REPLICAS,
    compose_cluster,
)
from modelplane.compose.inferencecluster.prerequisites import AFTER
from modelplane.composer import Inputs, Result
from modelplane.kube.admission import Admission
from modelplane.simulate import simulate_observed
from tests.compose.results import condition as condition
from tests.compose.results import manifest as manifest
from tests.compose.results import resources as resources
from tests.fleet.builders import gpu_device, inference_class_of
from tests.upstream_crds import UPSTREAM_CRDS

Obj = dict[str, Any]

ROOT = Path(__file__).resolve().parents[3]
XRD = ROOT / "apis" / "inferenceclusters" / "definition.yaml"

H100 = inference_class_of(
    "h100",
    [
        gpu_device(count=8, memory="81559Mi"),
        {"name": "ib", "driver": "fabric.example.com", "claim": "Synthetic"},
    ],
)


@functools.cache
def upstream() -> Admission:
    """The upstream CRDs (provider-helm, provider-kubernetes, Crossplane, Gateway API, Envoy
    Gateway, cert-manager, KAI, Prometheus Operator) and the InferenceCluster XRD."""
    return Admission.from_paths([UPSTREAM_CRDS, XRD])


def cluster(name: str = "east", **spec: Any) -> Obj:
    """An Existing cluster as declared, defaulted as the API server would store it."""
    base: Obj = {
        "cluster": {"source": "Existing", "existing": {"secretRef": {"name": f"{name}-kc"}}},
        "nodePools": [{"name": "h100", "className": "h100", "nodeCount": 4}],
    }
    base.update(spec)
    declared = {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": base,
    }
    admitted = upstream().admit(declared)
    assert [str(e) for e in admitted.errors] == []
    return admitted.object


def run(
    ic: Obj,
    observed: dict[str, Obj] | None = None,
    *,
    classes: list[Obj] | None = None,
    replicas: list[Obj] | None = None,
    gateways: list[Obj] | None = None,
) -> Result:
    required: dict[str, list[Obj]] = {CLASSES: classes if classes is not None else [H100]}
    if replicas is not None:
        required[REPLICAS] = replicas
    if gateways is not None:
        required[GATEWAYS] = gateways
    result = compose_cluster(Inputs(composite=ic, required=required, observed=observed or {}))
    asked = [n for n in result.requirements if n.startswith(f"{CLASS_BY_NAME}/")]
    if any(n not in required for n in asked):
        # A class not listed is asked for by name; ``classes`` is the truth, as Crossplane
        # fetches it and calls again.
        names = {str(c["metadata"]["name"]): c for c in required[CLASSES]}
        for n in asked:
            found = names.get(n.removeprefix(f"{CLASS_BY_NAME}/"))
            required[n] = [found] if found else []
        result = compose_cluster(Inputs(composite=ic, required=required, observed=observed or {}))
    assert result.fatal is None, result.fatal
    return result


def created(result: Result) -> dict[str, Obj]:
    """Every composed resource as observed right after Crossplane created it (no status)."""
    return {k: copy.deepcopy(d.resource) for k, d in result.resources.items()}


def installing(ic: Obj, **kw: Any) -> Result:
    """The reconcile after the ProviderConfigs exist and the Gateway API CRD is served: the
    whole stack composed, nothing of it ready but what another component starts after
    (prerequisites.AFTER)."""
    observed = created(run(ic, created(run(ic, **kw)), **kw))
    waited = {key: observed[key] for key, _ in AFTER.values() if key in observed}
    return run(ic, {**observed, **simulate_observed(waited, ready_copies=1)}, **kw)


def installed(ic: Obj, **kw: Any) -> Result:
    """The reconcile once every composed resource is observed as a working cluster reports it."""
    composing = installing(ic, **kw)
    return run(ic, observed_as_installed(composing), **kw)


def observed_as_installed(result: Result) -> dict[str, Obj]:
    return simulate_observed(created(result), ready_copies=1)


def releases(result: Result) -> dict[str, Obj]:
    return {k: r for k, r in resources(result).items() if r["kind"] == "Release"}


def by_component(result: Result, component: str) -> dict[str, Obj]:
    return {
        k: r
        for k, r in resources(result).items()
        if (r["metadata"].get("labels") or {}).get("modelplane.ai/stack-component") == component
        and r["kind"] != "Usage"
    }
