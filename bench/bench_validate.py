"""Validation cost of ModelReplicas: the spec example and a large one (8 gang engines, 8
containers each), with compiled definitions.

- cold: an object never seen before (no whole-object memo hit; regex rules on metadata that
  other objects share may hit their memo), i.e. the evaluation cost of a new or changed XR;
- warm: the same object again (what render's fixed point and a reconcile loop see): a memo hit;
- no memo: both memos off, every rule evaluated.

Figures are the best of N runs in milliseconds.

Run: uv run python bench/bench_validate.py
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import yaml

from modelplane.kube import rules
from modelplane.kube.admission import Admission
from modelplane.kube.crd import load_definitions

ROOT = Path(__file__).resolve().parents[1]
# The API reference's example, verbatim.
EXAMPLE = ROOT / "examples" / "replica-seed" / "replica.yaml"


def large_replica() -> dict[str, Any]:
    def containers(role: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [
            {
                "name": "engine",
                "image": "vllm/vllm-openai:v0.23.0",
                "args": ["--model=Qwen/Qwen3-235B", "--tensor-parallel-size=8"],
                "env": [{"name": "HF_HOME", "value": "/cache"}],
                "resources": {"requests": {"cpu": "16", "memory": "256Gi"}},
                "ports": [{"containerPort": 8000, "name": "http"}]
                if role == "Leader"
                else [{"containerPort": 9000, "name": "metrics"}],
                "readinessProbe": {"httpGet": {"path": "/health", "port": "http"}}
                if role == "Leader"
                else {"tcpSocket": {"port": "metrics"}},
            }
        ]
        for i in range(7):
            out.append(
                {
                    "name": f"sidecar-{i}",
                    "image": "busybox:1.36",
                    "ports": [{"containerPort": 9100 + i, "name": f"side-{i}"}],
                    "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                }
            )
        return out

    def member(role: str) -> dict[str, Any]:
        m: dict[str, Any] = {
            "role": role,
            "nodePoolName": "gpu-h100",
            "deviceRequests": [
                {
                    "name": "gpu",
                    "deviceClassName": "gpu.nvidia.com",
                    "count": 8,
                    "selectors": [{"cel": 'device.attributes["gpu.nvidia.com"].name == "H100"'}],
                }
            ],
            "template": {
                "metadata": {
                    "labels": {
                        "app.kubernetes.io/name": "qwen",
                        "app.kubernetes.io/part-of": "inference",
                        "team": "ml",
                    },
                    "annotations": {"example.com/owner": "ml-team"},
                },
                "spec": {"containers": containers(role)},
            },
        }
        if role == "Worker":
            m["worker"] = {"nodes": 3}
        return m

    engines = [
        {"name": f"engine-{i}", "copies": 2, "members": [member("Leader"), member("Worker")]}
        for i in range(8)
    ]
    return {
        "apiVersion": "modelplane.ai/v1alpha1",
        "kind": "ModelReplica",
        "metadata": {"name": "large", "namespace": "ml-team"},
        "spec": {"clusterName": "big", "engines": engines},
    }


def timed(fn: Any, runs: int) -> float:
    # The best run: the machine is shared, and other load only ever adds time.
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples) * 1000


def variant(obj: dict[str, Any], i: int) -> dict[str, Any]:
    # A distinct object each time, so the rule memo cannot help: what a cold admission costs.
    other = copy.deepcopy(obj)
    other["spec"]["clusterName"] = f"cluster-{i}"
    for engine in other["spec"]["engines"]:
        for member in engine["members"]:
            member["nodePoolName"] = f"pool-{i}"
    return other


def main() -> None:
    start = time.perf_counter()
    definitions = load_definitions([ROOT / "apis"])
    admission = Admission(definitions)
    for d in definitions:
        d.compile()
    load_ms = (time.perf_counter() - start) * 1000

    example = yaml.safe_load(EXAMPLE.read_text())
    large = large_replica()
    assert admission.admit(example).ok, admission.admit(example).errors
    assert admission.admit(large).ok, admission.admit(large).errors

    print(f"load + compile apis/ (all rules): {load_ms:.1f} ms")
    print(f"{'object':10} {'cold':>9} {'warm':>9} {'no memo':>9} {'cold/warm':>10}")
    results: dict[str, tuple[float, float, float]] = {}
    for name, obj in (("example", example), ("large", large)):
        variants = [variant(obj, i) for i in range(200)]
        it = iter(variants)
        cold = timed(lambda it=it: admission.admit(next(it)), 100)
        admission.admit(obj)
        warm = timed(lambda obj=obj: admission.admit(obj), 300)
        rules.memoise = False
        no_memo = timed(lambda obj=obj: admission.admit(obj), 30)
        rules.memoise = True
        results[name] = (cold, warm, no_memo)
        print(f"{name:10} {cold:8.3f}ms {warm:8.3f}ms {no_memo:8.3f}ms {cold / warm:9.1f}x")
    ratio = results["large"][1] / results["example"][1]
    print(f"large/example warm ratio: {ratio:.1f}x")
    target = "met" if results["example"][1] < 2.0 else "MISSED"
    print(f"warm example under 2 ms: {target}")


if __name__ == "__main__":
    main()
