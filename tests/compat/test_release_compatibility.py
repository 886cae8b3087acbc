"""Upgrading Modelplane restarts nothing: composing against the observed state the last release
produced (tests/compat/release, recorded by tools/compat_fixtures.py) keeps every composed
resource's key and name, every remote object's identity and every pod template, unless the
change is one of MIGRATIONS (deliberate, and rolled out as the docs on operations say).

A changed name deletes and recreates the object (a ResourceClaimTemplate, a workload); a changed
pod template restarts every engine it runs, all at once.

What an upgrade hands over to another composite passes as long as the release's resource is
kept on the first upgraded reconcile, as the release left it observed here: an InferenceGateway's
own hop Objects are kept observe-only (same name, same remote object) while its
InferenceGatewayShards compose theirs, and released only on a later reconcile, once observed
observe-only with their shard Ready (tests/compose/inferencegateway/test_handover.py follows
that sequence)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from modelplane import manifests
from modelplane.compose.modelreplica.objectives import SERVED_ANNOTATION
from modelplane.compose.modelreplica.picker import CHECKSUM_ANNOTATION, checksum, render_config
from modelplane.compose.modelreplica.sglang import LAUNCHER, METRICS_FLAG
from modelplane.compose.registry import default_registry
from modelplane.compose.shared.endpointpicker import (
    FAIRNESS_PLUGIN,
    FLOW_CONTROL,
    PLACEMENT,
    PREFILL_DECODE_CONFIG,
    UNIFIED_CONFIG,
)
from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE
from modelplane.render import api_server_admission, render_passes
from modelplane.simulate import simulate_observed

Obj = dict[str, Any]
ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "tests" / "compat" / "release"
FIXTURES = sorted(RELEASE.glob("*.yaml"))
RESOURCE_NAME = "crossplane.io/composition-resource-name"


def _without_drain(template: Any) -> Any:
    """A pod spec as it was before ModelDeployments stamped a drain on their replicas: no
    termination grace period, no preStop sleep on any container."""
    if not isinstance(template, dict) or "containers" not in template:
        return template
    out = {k: v for k, v in template.items() if k != "terminationGracePeriodSeconds"}
    out["containers"] = [_without_sleep(c) for c in template["containers"]]
    return out


def _without_sleep(container: Obj) -> Obj:
    lifecycle = container.get("lifecycle") or {}
    if "sleep" not in (lifecycle.get("preStop") or {}):
        return container
    rest = {k: v for k, v in lifecycle.items() if k != "preStop"}
    out = {k: v for k, v in container.items() if k != "lifecycle"}
    return {**out, "lifecycle": rest} if rest else out


def _without_sglang_metrics(template: Any) -> Any:
    """A pod spec as it was before SGLang engines got ``--enable-metrics`` (and the drain)."""
    template = _without_drain(template)
    if not isinstance(template, dict) or "containers" not in template:
        return template
    return {**template, "containers": [_unflagged(c) for c in template["containers"]]}


FLAGGED = (LAUNCHER, METRICS_FLAG)


def _unflagged(container: Obj) -> Obj:
    out = dict(container)
    for field in ("command", "args"):
        words = container.get(field)
        if words:
            joined = [str(w).replace(f"{LAUNCHER} {METRICS_FLAG}", LAUNCHER) for w in words]
            added = {i for i, w in enumerate(joined[1:], 1) if (joined[i - 1], w) == FLAGGED}
            out[field] = [w for i, w in enumerate(joined) if i not in added]
    return out


def _without_picker_placement(template: Any) -> Any:
    """A pod spec as it was before the endpoint picker tolerated the GPU taint (and preferred
    nodes without a GPU). Its Deployment rolls with a surge and no unavailability."""
    if not isinstance(template, dict):
        return template
    return {k: v for k, v in template.items() if PLACEMENT.get(k) != v}


def _without_example_token(template: Any) -> Any:
    """A pod spec as the examples wrote it before their engines loading a gated model read
    ``HF_TOKEN`` from the Secret ``hf-token``: an edit of the example's input, not of what
    Modelplane composes from a given input."""
    if not isinstance(template, dict) or "containers" not in template:
        return template
    return {**template, "containers": [_tokenless(c) for c in template["containers"]]}


def _tokenless(container: Obj) -> Obj:
    env = [e for e in container.get("env") or () if e.get("name") != "HF_TOKEN"]
    out = {k: v for k, v in container.items() if k != "env"}
    return {**out, "env": env} if env else out


def _without_deployment_labels(metadata: Any) -> Any:
    """A pod template's metadata as it was before serving and picker pods carried their
    ModelDeployment's labels, which fleet-wide metric queries select a deployment's series by."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get("labels"), dict):
        return metadata
    stamped = (DEPLOYMENT, DEPLOYMENT_NAMESPACE)
    labels = {k: v for k, v in metadata["labels"].items() if k not in stamped}
    return {**metadata, "labels": labels}


def _config_before_flow_control(text: str) -> str:
    """A default picker config as it was before it turned flow control on."""
    gate = "featureGates:\n- flowControl\n"
    return text.replace(gate, "").replace(FAIRNESS_PLUGIN, "").replace(FLOW_CONTROL, "")


def _stamped_before_flow_control(text: str) -> str:
    """The same, as a PrefillDecode deployment stamps the default into its replicas (rendered
    from the parsed config, keys sorted)."""
    return render_config(yaml.safe_load(_config_before_flow_control(text)))


_BEFORE_FLOW_CONTROL = {
    checksum(text): checksum(_config_before_flow_control(text))
    for text in (UNIFIED_CONFIG, PREFILL_DECODE_CONFIG)
} | {
    checksum(render_config(yaml.safe_load(PREFILL_DECODE_CONFIG))): checksum(
        _stamped_before_flow_control(PREFILL_DECODE_CONFIG)
    )
}


def _without_flow_control(metadata: Any) -> Any:
    """A picker pod template's metadata as it was before Modelplane's default picker configs
    turned flow control on: the checksum of the config without it (a new checksum rolls the
    pickers, one at a time; the engines are untouched), and, as both changed a ModelDeployment's
    picker pods since the recorded release, without the deployment labels."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get("annotations"), dict):
        return metadata
    annotations = metadata["annotations"]
    before = _BEFORE_FLOW_CONTROL.get(annotations.get(CHECKSUM_ANNOTATION))
    if before is None:
        return metadata
    reverted = {**metadata, "annotations": {**annotations, CHECKSUM_ANNOTATION: before}}
    return _without_deployment_labels(reverted)


def _unmarked(metadata: Any) -> Any:
    """A picker pod template's metadata as it was before pickers were marked started with their
    objectives served (a picker of the recorded release restarts once, one at a time, after its
    cluster has applied its objectives: compose/modelreplica/objectives.py ``served``), and
    before flow control, which changed the same pods since the recorded release."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get("annotations"), dict):
        return metadata
    annotations = metadata["annotations"]
    if SERVED_ANNOTATION not in annotations:
        return metadata
    kept = {k: v for k, v in annotations.items() if k != SERVED_ANNOTATION}
    return _without_flow_control({**metadata, "annotations": kept})


MIGRATIONS: dict[str, Callable[[Any], Any]] = {
    # Reaches replicas of a ModelDeployment through its rollout strategy (the stamp changes).
    "drain": _without_drain,
    # The same way: a pods revision of its own (an SGLang reference replica).
    "sglang metrics": _without_sglang_metrics,
    "picker placement": _without_picker_placement,
    "example token": _without_example_token,
    # Through the strategy too: the labels are in the pods revision (its references are stamped).
    "deployment labels": _without_deployment_labels,
    # The pickers' config checksum: each replica's pickers roll once, one at a time.
    "picker flow control": _without_flow_control,
    # The same pickers once more, each when its objectives are applied, one at a time.
    "picker objectives served": _unmarked,
}
"""Deliberate changes since the recorded release, each as what undoes it on a pod template: a
changed template passes once some migration's undo gives back what the release composed."""


Key = tuple[str, str, str]


@functools.cache
def admit() -> Any:
    return api_server_admission()


def composed(docs: list[Obj]) -> dict[Key, Obj]:
    """Each composed resource by (owner kind, owner name, composition resource name)."""
    out: dict[Key, Obj] = {}
    for doc in docs:
        meta = doc.get("metadata") or {}
        key = (meta.get("annotations") or {}).get(RESOURCE_NAME)
        if key is None:
            continue
        [owner] = [o for o in meta.get("ownerReferences") or () if o.get("controller")]
        out[(owner["kind"], owner["name"], key)] = doc
    return out


def _templates(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every pod spec in a manifest, and the metadata beside it, by path."""
    if isinstance(node, dict):
        if "containers" in node:
            yield path, node
        spec = node.get("spec")
        if isinstance(spec, dict) and "containers" in spec and "metadata" in node:
            yield f"{path}/metadata", node["metadata"]
        for k, v in node.items():
            yield from _templates(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _templates(v, f"{path}[{i}]")


def surface(doc: Obj) -> dict[str, Any]:
    """What an upgrade must keep: the resource's identity, the identity of the object it
    applies on a cluster, and that object's pod templates."""
    meta = doc["metadata"]
    out: dict[str, Any] = {
        "identity": (doc["apiVersion"], doc["kind"], meta.get("name"), meta.get("namespace"))
    }
    manifest = ((doc.get("spec") or {}).get("forProvider") or {}).get("manifest")
    if isinstance(manifest, dict):
        rmeta = manifest.get("metadata") or {}
        out["remote"] = (
            manifest.get("apiVersion"),
            manifest.get("kind"),
            rmeta.get("name"),
            rmeta.get("namespace"),
        )
        out |= {f"pod template {p}": t for p, t in _templates(manifest.get("spec"), "spec")}
    return out


def changes(before: dict[Key, Obj], after: dict[Key, Obj]) -> list[str]:
    out = []
    for key, old in sorted(before.items()):
        where = "/".join(key)
        new = after.get(key)
        if new is None:
            out.append(f"{where}: no longer composed (deleted on upgrade)")
            continue
        was, now = surface(old), surface(new)
        for field in sorted(was.keys() | now.keys()):
            if was.get(field) == now.get(field):
                continue
            migrated = field.startswith("pod template") and any(
                undo(now.get(field)) == was.get(field) for undo in MIGRATIONS.values()
            )
            if not migrated:
                out.append(f"{where} {field}: {was.get(field)!r} -> {now.get(field)!r}")
    return out


def upgraded(path: Path) -> tuple[dict[Key, Obj], dict[Key, Obj]]:
    """What the release composed, and what this version composes against it."""
    released = [m.obj for m in manifests.load([str(path)])]
    inputs = [m.obj for m in manifests.load([str(ROOT / "examples" / path.stem)])]
    before = composed(released)
    # Observed as running: render prints what is desired, the cluster reports it ready.
    owners: dict[tuple[str, str], dict[str, Obj]] = {}
    for (kind, name, key), doc in before.items():
        owners.setdefault((kind, name), {})[key] = doc
    running = [o for group in owners.values() for o in simulate_observed(group, 1).values()]
    docs, _ = render_passes(
        default_registry(),
        inputs,
        running,
        admit(),
        lambda desired: simulate_observed(desired, 1),
    )
    return before, composed(docs)


def first_pod_template(docs: dict[Key, Obj]) -> tuple[Key, str, Obj]:
    """The first composed object carrying a pod template: its key, the template's path in its
    manifest, and the pod spec itself (edited in place by the tests that change it)."""
    key, doc = next((k, d) for k, d in docs.items() if any("pod template" in f for f in surface(d)))
    manifest = doc["spec"]["forProvider"]["manifest"]
    path, podspec = next(
        (p, t) for p, t in _templates(manifest["spec"], "spec") if "containers" in t
    )
    return key, path, podspec


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_an_upgrade_keeps_every_key_name_and_pod_template_the_release_composed(
    path: Path,
) -> None:
    before, after = upgraded(path)
    assert changes(before, after) == []


def test_the_release_fixtures_cover_every_workload_kind() -> None:
    kinds = {
        surface(doc)["remote"][1]
        for path in FIXTURES
        for doc in composed([m.obj for m in manifests.load([str(path)])]).values()
        if "remote" in surface(doc)
    }
    assert {"Deployment", "LeaderWorkerSet", "PodCliqueSet", "ResourceClaimTemplate"} <= kinds


def test_a_changed_pod_template_is_caught() -> None:
    before, after = upgraded(RELEASE / "replica-sidecar.yaml")
    key, path, podspec = first_pod_template(after)
    podspec["containers"][0]["image"] = "vllm/vllm-openai:changed"
    [change] = changes(before, after)
    assert change.startswith(f"{'/'.join(key)} pod template {path}:")


def test_a_migration_excuses_only_its_own_change() -> None:
    before, after = upgraded(RELEASE / "fleet-gang.yaml")
    key, path, podspec = first_pod_template(after)
    assert "terminationGracePeriodSeconds" in podspec  # the drain migration applies here
    podspec["containers"][0]["args"] = ["--changed"]
    [change] = changes(before, after)
    assert change.startswith(f"{'/'.join(key)} pod template {path}:")
