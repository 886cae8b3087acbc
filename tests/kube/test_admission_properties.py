"""Property: whatever ModelReplica comes in, admission accepts it or reports errors, never raises.

Objects are generated from the XRD's own schema (mostly valid), then bent by random mutations
(deleted fields, replaced values of any JSON type, unknown fields).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from modelplane.kube.admission import Admission
from modelplane.kube.errors import FieldError
from tests.properties import examples

ADMISSION = Admission.default()
VERSION = ADMISSION.version("modelplane.ai/v1alpha1", "ModelReplica")
assert VERSION is not None
SPEC_SCHEMA: dict[str, Any] = VERSION.raw_schema["properties"]["spec"]

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 70000)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
LABEL_KEY = st.sampled_from(["app", "example.com/tier", "modelplane.ai/x", "Bad Key", "k" * 64])
LABEL_VALUE = st.sampled_from(["v", "", "gpu-", "a b", "x" * 64])


def from_schema(schema: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        return st.integers(0, 70000) | st.sampled_from(["http", "metrics"])
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        if not props:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                values = (
                    LABEL_VALUE if extra.get("type") == "string" else from_schema(extra, depth + 1)
                )
                return st.dictionaries(LABEL_KEY, values, max_size=3)
            return st.dictionaries(st.text(min_size=1, max_size=4), JSON, min_size=1, max_size=2)
        required = set(schema.get("required") or ())
        return st.fixed_dictionaries(
            {k: from_schema(v, depth + 1) for k, v in props.items() if k in required},
            optional={
                k: from_schema(v, depth + 1)
                for k, v in props.items()
                if k not in required and depth < 9
            },
        )
    if kind == "array":
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", 3), low + 2)
        return st.lists(
            from_schema(schema.get("items") or {}, depth + 1), min_size=low, max_size=high
        )
    if kind == "integer":
        return st.integers(schema.get("minimum", -3), schema.get("maximum", 100))
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: len(s) < 20)
        return st.sampled_from(["engine", "epp", "http", "gpu", "a", "Prefill", "/health"])
    return JSON


REPLICA = from_schema(SPEC_SCHEMA).map(
    lambda spec: {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "r", "namespace": "n"},
        "spec": spec,
    }
)


@st.composite
def valid_replica(draw: st.DrawFn) -> dict[str, Any]:
    """A ModelReplica built to satisfy every rule: the shapes the scheduler stamps out."""
    names = draw(
        st.lists(
            st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True),
            min_size=1,
            max_size=8,
            unique=True,
        )
    )
    labels = st.dictionaries(
        st.sampled_from(["app", "example.com/tier", "team", "app.kubernetes.io/name"]),
        st.sampled_from(["v", "", "gpu", "a.b_c-d"]),
        max_size=3,
    )

    def pod(role: str) -> dict[str, Any]:
        sidecars = draw(
            st.lists(st.sampled_from(["proxy", "log", "metrics"]), unique=True, max_size=2)
        )
        engine_ports = [{"containerPort": 9000, "name": "m"}] if role == "Worker" else []
        containers = [{"name": "engine", "image": "vllm", "ports": engine_ports}]
        containers += [{"name": n, "image": "busybox"} for n in sidecars]
        template: dict[str, Any] = {"spec": {"containers": containers}}
        if draw(st.booleans()):
            template["metadata"] = {"labels": draw(labels)}
        return template

    def member(role: str, devices: bool) -> dict[str, Any]:
        m: dict[str, Any] = {"role": role, "nodePoolName": "pool", "template": pod(role)}
        if devices:
            m["deviceRequests"] = [
                {
                    "name": "gpu",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": draw(st.integers(1, 8)),
                }
            ]
        if role == "Worker":
            m["worker"] = {"nodes": draw(st.integers(1, 63))}
        return m

    engines = []
    for name in names:
        if draw(st.booleans()):
            members = [member("Standalone", True)]
        else:
            leader_devices = draw(st.booleans())
            members = [member("Leader", leader_devices), member("Worker", True)]
        engine: dict[str, Any] = {"name": name, "members": members}
        if draw(st.booleans()):
            engine["copies"] = draw(st.integers(1, 64))
        engines.append(engine)
    spec: dict[str, Any] = {"clusterName": "c", "engines": engines}
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "r", "namespace": "n"},
        "spec": spec,
    }


def _nodes(value: Any, out: list[Any]) -> list[Any]:
    if isinstance(value, dict | list):
        out.append(value)
        for child in value.values() if isinstance(value, dict) else value:
            _nodes(child, out)
    return out


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(REPLICA | valid_replica()))
    for _ in range(draw(st.integers(1, 4))):
        nodes = _nodes(obj["spec"], [])
        node = draw(st.sampled_from(nodes))
        if isinstance(node, dict):
            action = draw(st.sampled_from(["delete", "replace", "add"]))
            if action == "add" or not node:
                node[draw(st.text(min_size=1, max_size=5))] = draw(JSON)
            else:
                key = draw(st.sampled_from(sorted(node)))
                if action == "delete":
                    del node[key]
                else:
                    node[key] = draw(JSON)
        elif node:
            node[draw(st.integers(0, len(node) - 1))] = draw(JSON)
        else:
            node.append(draw(JSON))
    return obj


def _check(obj: dict[str, Any]) -> None:
    before = copy.deepcopy(obj)
    admitted = ADMISSION.admit(obj)
    assert obj == before
    assert all(isinstance(e, FieldError) and str(e) for e in admitted.errors)
    if admitted.ok:
        # An admitted object is a fixed point: admitting it again changes nothing.
        again = ADMISSION.admit(admitted.object)
        assert again.errors == []
        assert again.object == admitted.object


SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(REPLICA)
def test_generated_replicas_are_admitted_or_rejected(obj: dict[str, Any]) -> None:
    _check(obj)


@SETTINGS
@given(mutated())
def test_mutated_replicas_are_admitted_or_rejected(obj: dict[str, Any]) -> None:
    _check(obj)


@SETTINGS
@given(valid_replica())
def test_replicas_shaped_like_the_schedulers_are_accepted(obj: dict[str, Any]) -> None:
    admitted = ADMISSION.admit(obj)
    assert [str(e) for e in admitted.errors] == []
    _check(obj)
