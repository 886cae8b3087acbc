"""A stand-in composer, registered only in tests, that exercises the composer contract.

It reads a ModelReplica-shaped composite, asks for the InferenceCluster it names, then for
the InferenceClass of that cluster's first pool (a requirement that depends on the answer to
the first, so it needs a second round trip), and composes one ConfigMap per engine plus a
nested composite when ``spec.child`` is set.
"""

from __future__ import annotations

from modelplane.composer import (
    Condition,
    Desired,
    Event,
    Inputs,
    Registry,
    Requirement,
    Result,
)

GROUP_VERSION = "modelplane.ai/v1alpha1"


def compose(inputs: Inputs) -> Result:
    spec = inputs.composite["spec"]
    requirements = {
        "cluster": Requirement(GROUP_VERSION, "InferenceCluster", match_name=spec["clusterName"])
    }
    clusters = inputs.required.get("cluster", [])
    classes: list[dict] = []
    if clusters:
        pool_class = clusters[0]["spec"]["nodePools"][0]["className"]
        requirements["class"] = Requirement(GROUP_VERSION, "InferenceClass", match_name=pool_class)
        classes = inputs.required.get("class", [])
    result = Result(requirements=requirements)
    if not classes:
        result.conditions.append(Condition("Placed", "False", "WaitingForCluster"))
        return result
    for engine in spec["engines"]:
        key = f"engine-{engine['name']}"
        result.resources[key] = Desired(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": engine["name"]},
                "data": {
                    "class": classes[0]["metadata"]["name"],
                    "gateway": clusters[0].get("status", {}).get("gateway", "unpublished"),
                },
            },
            ready="True" if _observed_ready(inputs, key) else "False",
        )
    if "child" in spec:
        result.resources["child"] = Desired(
            {"apiVersion": GROUP_VERSION, "kind": "ModelReplica", "spec": spec["child"]}
        )
    result.conditions.append(Condition("Placed", "True", "Placed", "on " + spec["clusterName"]))
    result.events.append(Event("Normal", f"composed {len(spec['engines'])} engines"))
    result.status = {"engines": len(spec["engines"])}
    return result


def _observed_ready(inputs: Inputs, key: str) -> bool:
    return bool(inputs.observed.get(key, {}).get("status", {}).get("ready"))


def compose_cluster(inputs: Inputs) -> Result:
    """Publishes a status other composites read, as the InferenceCluster composition does."""
    return Result(status={"gateway": f"gw.{inputs.composite['metadata']['name']}"})


def registry(*, with_cluster_composer: bool = False) -> Registry:
    r = Registry()
    r.register(GROUP_VERSION, "ModelReplica", compose)
    if with_cluster_composer:
        r.register(GROUP_VERSION, "InferenceCluster", compose_cluster)
    return r


def replica(name: str = "r0", cluster: str = "c1", engines: int = 1, **spec: object) -> dict:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ModelReplica",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {
            "clusterName": cluster,
            "engines": [_engine(f"e{i}", copies=i + 1) for i in range(engines)],
            **spec,
        },
    }


def _engine(name: str, copies: int) -> dict:
    """A ModelReplica engine the XRD accepts: one Standalone member claiming one GPU."""
    return {
        "name": name,
        "copies": copies,
        "members": [
            {
                "role": "Standalone",
                "nodePoolName": "p",
                "deviceRequests": [{"name": "gpu", "count": 1, "deviceClassName": "gpu.example"}],
                "template": {"spec": {"containers": [{"name": "engine", "image": "engine:1"}]}},
            }
        ],
    }


def cluster(name: str = "c1", class_name: str = "l4") -> dict:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "InferenceCluster",
        "metadata": {"name": name},
        "spec": {"nodePools": [{"name": "p", "className": class_name, "nodeCount": 2}]},
    }


def inference_class(name: str = "l4") -> dict:
    return {"apiVersion": GROUP_VERSION, "kind": "InferenceClass", "metadata": {"name": name}}
