"""Every shipped example (and the getting-started guide's manifests) asks only for devices its
own classes declare.

An example whose selector no declared device satisfies renders, but on a real cluster its pods
stay Pending: the classes are what the DRA drivers publish, so a selector must match them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane.scheduling.devices import DeviceKind, device_kinds, matches

Obj = dict[str, Any]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GETTING_STARTED = ROOT / "docs" / "getting-started"


def shipped() -> list[Path]:
    """Every directory of manifests a user is handed, each one self-contained."""
    return [*sorted(p for p in EXAMPLES.iterdir() if p.is_dir()), GETTING_STARTED]


def documents(example: Path) -> list[Obj]:
    return [
        doc
        for path in sorted(example.rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if isinstance(doc, dict)
    ]


def replica_requests(replica: Obj) -> Iterator[tuple[str, str, Obj]]:
    """(where, pool, request) for every device request of a ModelReplica."""
    name = replica["metadata"]["name"]
    for engine in replica["spec"]["engines"]:
        for m, member in enumerate(engine["members"]):
            for request in member.get("deviceRequests") or []:
                where = f"ModelReplica {name} engine {engine['name']} member {m}"
                yield where, member["nodePoolName"], request


def deployment_requests(deployment: Obj) -> Iterator[tuple[str, Obj]]:
    name = deployment["metadata"]["name"]
    for engine in deployment["spec"]["template"]["spec"]["engines"]:
        for m, member in enumerate(engine["members"]):
            for request in (member.get("nodeSelector") or {}).get("devices") or []:
                yield f"ModelDeployment {name} engine {engine['name']} member {m}", request


def satisfied(request: Obj, kinds: tuple[DeviceKind, ...], *, by_class: bool) -> bool:
    selectors = tuple(str(s["cel"]) for s in request.get("selectors") or ())
    count = int(request.get("count", 1))
    return any(
        (not by_class or k.device_class_name == request.get("deviceClassName"))
        and k.count >= count
        and matches(selectors, k) is True
        for k in kinds
    )


def unmet(example: Path) -> list[str]:
    docs = documents(example)
    classes = {
        d["metadata"]["name"]: device_kinds(d) for d in docs if d["kind"] == "InferenceClass"
    }
    pools = {
        (d["metadata"]["name"], p["name"]): p["className"]
        for d in docs
        if d["kind"] == "InferenceCluster"
        for p in d["spec"].get("nodePools") or []
    }
    problems = []
    for d in docs:
        if d["kind"] == "ModelReplica":
            for where, pool, request in replica_requests(d):
                kinds = classes.get(pools.get((d["spec"]["clusterName"], pool), ""), ())
                if not satisfied(request, kinds, by_class=True):
                    problems.append(f"{where} request {request['name']} on pool {pool}")
        elif d["kind"] == "ModelDeployment":
            for where, request in deployment_requests(d):
                if not any(satisfied(request, k, by_class=False) for k in classes.values()):
                    problems.append(f"{where} request {request['name']}")
    return problems


@pytest.mark.parametrize("example", shipped(), ids=lambda p: p.name)
def test_every_device_request_matches_a_device_its_examples_classes_declare(example: Path) -> None:
    assert unmet(example) == []


def test_the_check_finds_a_selector_no_declared_device_satisfies(tmp_path: Path) -> None:
    # An L4 reports 23034Mi: a 24Gi floor is the kind of selector that leaves pods Pending.
    for path in (EXAMPLES / "replica-seed").glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    replica = tmp_path / "replica.yaml"
    text = replica.read_text()
    marker = "deviceClassName: gpu.nvidia.com"
    assert marker in text
    replica.write_text(
        text.replace(
            marker,
            marker + '\n        selectors:\n        - cel: device.capacity["gpu.nvidia.com"].memory'
            '.compareTo(quantity("24Gi")) >= 0',
            1,
        )
    )
    assert len(unmet(tmp_path)) == 1
