"""The serving stack's state, read only from observed composed resources.

A component is Ready when every resource it composed is observed Ready (a Release once Helm
reports it deployed with its workloads ready, an Object by its readiness policy). It Failed
when Helm gave up on a release (state ``failed``, or the provider reports the release cannot
be synced: a chart that does not exist at that version, values the chart refuses). Anything
else is Installing; an Object the provider could not apply yet (its CRD is still being
installed, a referenced Secret is missing) is Installing with the provider's message, since the
provider retries it. ``StackReady`` names every component that is not Ready.

A cluster whose Gateway API CRDs are older than the bundle the composed objects are tested
against fails its envoy-gateway component, naming what to upgrade: Helm never replaces CRDs that
exist, so installing Envoy Gateway does not fix them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.compose.inferencecluster.releases import installed_version
from modelplane.compose.inferencecluster.target import EXTERNAL
from modelplane.compose.shared.remote import OBSERVED_MANIFEST, refused
from modelplane.composer import Condition
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.reasons import InferenceCluster

READY = "Ready"
INSTALLING = "Installing"
FAILED = "Failed"
STACK_READY = InferenceCluster.STACK_READY
_MESSAGE_MAX = 200

GATEWAY_API_MINIMUM = (1, 5, 1)
"""The Gateway API bundle the pinned gateway-helm (v1.8.1) installs: BackendTLSPolicy v1 and
``Gateway.spec.tls.backend``, which the front door composes, are in it."""
BUNDLE_VERSION = "gateway.networking.k8s.io/bundle-version"
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class ComponentState:
    name: str
    mode: str
    version: str
    state: str
    message: str = ""

    def published(self) -> Obj:
        out: Obj = {"name": self.name, "mode": self.mode}
        if self.version:
            out["version"] = self.version
        out["state"] = self.state
        if self.message:
            out["message"] = self.message
        return out


def component_state(
    name: str,
    mode: str,
    version: str,
    keys: Sequence[str],
    observed: Mapping[str, Any],
    ready: Mapping[str, bool],
    held: Mapping[str, str] | None = None,
) -> ComponentState:
    """``ready``: whether each observed resource is ready (``observed.observed_ready``), read
    once by the caller for every component; ``held``: keys not composed yet, each with what it
    waits for (``prerequisites.held``)."""
    state, message = READY, ""
    for key in keys:
        obj = observed.get(key)
        if obj is None:
            state = _worse(state, INSTALLING)
            if held and key in held:
                message = message or f"{key} waits for {held[key]}"
            continue
        outdated = outdated_gateway_api(obj)
        if outdated:
            state, message = FAILED, outdated
            continue
        failure = _failure(obj)
        if failure:
            if obj.get("kind") == "Release":
                state, message = FAILED, failure
            elif state != FAILED:
                state, message = INSTALLING, message or failure
        elif _upgrading(obj, version):
            # Ready reports the version before until the provider has upgraded it.
            state = _worse(state, INSTALLING)
            message = message or f"upgrading from {installed_version(obj)} to {version}"
        elif not ready[key]:
            state = _worse(state, INSTALLING)
    return ComponentState(name, mode, version, state, message[:_MESSAGE_MAX])


def stack_condition(states: Sequence[ComponentState]) -> Condition:
    total = len(states)
    failed = [s for s in states if s.state == FAILED]
    installing = [s for s in states if s.state == INSTALLING]
    if not failed and not installing:
        ready = f"all {total} components ready"
        return Condition(STACK_READY, "True", InferenceCluster.INSTALLED, ready)
    parts = []
    if failed:
        parts.append(f"failed {len(failed)} of {total}: {_named(failed)}")
    if installing:
        parts.append(f"installing {len(installing)} of {total}: {_named(installing)}")
    reason = InferenceCluster.FAILED if failed else InferenceCluster.INSTALLING
    return Condition(STACK_READY, "False", reason, "; ".join(parts))


def waiting_condition(states: Sequence[ComponentState], configs: str) -> Condition:
    message = (
        f"installing {len(states)} of {len(states)} once the ClusterProviderConfigs {configs} "
        "exist: " + _named(states)
    )
    return Condition(STACK_READY, "False", InferenceCluster.WAITING_FOR_PROVIDER_CONFIGS, message)


def _named(states: Sequence[ComponentState]) -> str:
    out = []
    for s in states:
        label = s.name + (f" ({EXTERNAL})" if s.mode == EXTERNAL else "")
        out.append(f"{label} ({s.message})" if s.message else label)
    return ", ".join(out)


def outdated_gateway_api(obj: Mapping[str, Any]) -> str:
    """Why the observed Gateway API CRD is too old, or "" (not that CRD, its bundle version not
    stated, or recent enough: only a stated older version is evidence)."""
    manifest = objects.mapping(obj, *OBSERVED_MANIFEST)
    if manifest.get("kind") != "CustomResourceDefinition" or objects.name(manifest) != (
        "gateways.gateway.networking.k8s.io"
    ):
        return ""
    version = str(objects.annotations(manifest).get(BUNDLE_VERSION) or "")
    found = _SEMVER.match(version)
    if found is None or tuple(int(g) for g in found.groups()) >= GATEWAY_API_MINIMUM:
        return ""
    minimum = "v" + ".".join(map(str, GATEWAY_API_MINIMUM))
    return (
        f"the cluster's Gateway API CRDs are bundle {version}, older than {minimum} (Helm keeps "
        f"CRDs that exist): apply the Gateway API {minimum} CRDs or later"
    )


def _failure(obj: Mapping[str, Any]) -> str:
    error = refused(obj)
    if error is not None:
        return error
    at_provider = objects.mapping(obj, "status", "atProvider")
    if obj.get("kind") == "Release" and at_provider.get("state") == "failed":
        return "the Helm release failed"
    return ""


def _upgrading(obj: Mapping[str, Any], version: str) -> bool:
    """Whether the provider states another version installed than the one composed (a
    statement only: a provider that states none is judged by Ready alone)."""
    installed = installed_version(obj)
    return bool(version and installed and installed != version)


def _worse(state: str, other: str) -> str:
    order = (READY, INSTALLING, FAILED)
    return max(state, other, key=order.index)
