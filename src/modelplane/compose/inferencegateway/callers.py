"""Callers who authenticate at an InferenceGateway (``spec.auth``).

A caller is one entry of a Secret that ``spec.auth.callerSecretSelector`` matches in the
gateway's control-plane namespace: the entry's key is the caller's identity, its value the API
key. That is Envoy Gateway's own credential Secret (v1.8.1 ``api_key_auth_types.go``), so each
Secret is copied to the gateway's host as it is (data patched in by the Object's references,
never written into a manifest) and named in one SecurityPolicy on the front listener:
``apiKeyAuth`` reading the key header, forwarding the identity in ``x-modelplane-caller`` and
removing the key before any backend sees it. A ClientTrafficPolicy removes any
``x-modelplane-caller`` a request arrives with, before any filter runs (early header mutation),
so the header a backend sees is only ever the one the filter set; a gateway without ``auth``
composes the same ClientTrafficPolicy (``compose_guard``), so no header only a gateway may set
passes it either
(tests/conformance/test_envoy_gateway_api_key.py cites each behaviour relied on).

Evidence, not absence: a copy composed before whose Secret the label-selected list does not
hold is asked for by name and kept until the answer comes; it goes only when its Secret is gone
or no longer carries the selector's labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.shared.evidence import look_up
from modelplane.compose.shared.fleetsecrets import fleet_ca_names, issued_secret
from modelplane.compose.shared.frontdoor import (
    CALLER_HEADER,
    CONTROL_NAMESPACE,
    ENVOY_API_VERSION,
    FRONT_LISTENER,
    ClusterGateway,
    caller_secret_selector,
    front_gateway_name,
    listener_ref,
    secret_copy_references,
)
from modelplane.compose.shared.remote import managed_metadata, remote_object, secret_copy
from modelplane.composer import Desired, Inputs, Requirement, carry_forward
from modelplane.kube.names import dns_label
from modelplane.kube.objects import Obj, mapping
from modelplane.observed import ready_as_observed

CALLERS = "caller-secrets"
"""The requirement listing the Secrets the selector matches."""
CALLER_BY_NAME = "caller-secret"
"""Requirements asking for a copied caller Secret the list does not hold: ``caller-secret/...``."""
COPY = "caller/"
"""Composition resource names of the copies: ``caller/<secret>``."""
POLICY = "caller-policy"
HEADER_GUARD = "caller-header-guard"
SECRET = ("v1", "Secret")
OPAQUE = "Opaque"


@dataclass
class Callers:
    """What ``spec.auth`` composes: the copies and the two policies, the requirements to keep
    reading the Secrets, and what is still being read (nothing decided while it is)."""

    resources: dict[str, Desired] = field(default_factory=dict)
    requirements: dict[str, Requirement] = field(default_factory=dict)
    reading: list[str] = field(default_factory=list)
    problem: str = ""
    secrets: list[str] = field(default_factory=list)
    identities: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each caller's identity and its Secret's labels (what ``spec.limits`` selects by)."""


def key_header(spec: Mapping[str, Any]) -> str:
    return str(mapping(spec, "auth").get("keyHeader") or "authorization").lower()


def auth_problem(spec: Mapping[str, Any]) -> str:
    """Why ``spec.auth`` cannot be composed, or "" (the XRD refuses the same at admission)."""
    auth = spec.get("auth")
    if auth is None:
        return ""
    if not isinstance(auth, Mapping):
        return "InferenceGateway spec.auth must be an object"
    if not caller_secret_selector(spec):
        return (
            "InferenceGateway spec.auth.callerSecretSelector.matchLabels must name at least one "
            f"label: an empty selector would copy every Secret in {CONTROL_NAMESPACE} (the fleet "
            "CA's among them) to the gateway's cluster. Nothing was changed"
        )
    if key_header(spec) == CALLER_HEADER:
        return (
            f"InferenceGateway spec.auth.keyHeader {CALLER_HEADER!r} is the identity header the "
            "gateway sets; name the header callers send their key in. Nothing was changed"
        )
    return ""


def without_auth(spec: Mapping[str, Any], field: str) -> str:
    """Why ``spec.<field>`` cannot be composed, as it needs ``spec.auth``, or "" (the XRD refuses
    the same at admission)."""
    if spec.get(field) is not None and spec.get("auth") is None:
        return (
            f"InferenceGateway spec.{field} requires spec.auth: without callers who authenticate "
            "nothing tells one caller from another. Nothing was changed"
        )
    return ""


def entries(spec: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    """The mappings listed in ``spec.<field>`` (none when it is not a list)."""
    found = spec.get(field)
    return [e for e in found if isinstance(e, Mapping)] if isinstance(found, list) else []


def compose_callers(
    inputs: Inputs,
    gateway: str,
    host: ClusterGateway,
    fleet: Mapping[str, Obj],
    guarded: tuple[str, ...] = (),
) -> Callers:
    """The caller copies and policies of a gateway with ``spec.auth`` (nothing without it);
    ``guarded``: headers removed from every request beside the identity header."""
    spec = inputs.composite["spec"]
    if not isinstance(spec.get("auth"), Mapping):
        return Callers()
    labels = caller_secret_selector(spec)
    requirements = {CALLERS: Requirement(*SECRET, match_labels=labels, namespace=CONTROL_NAMESPACE)}
    listed = inputs.required.get(CALLERS)
    if listed is None:
        return _held(inputs.observed, requirements, ["the caller Secrets"])
    selected = _selected(listed, labels)
    copied = {k.removeprefix(COPY) for k in inputs.observed if k.startswith(COPY)}
    lookup = look_up(
        inputs, CALLER_BY_NAME, *SECRET, copied - set(selected), namespace=CONTROL_NAMESPACE
    )
    requirements.update(lookup.requirements)
    if lookup.pending:
        return _held(inputs.observed, requirements, [f"Secret {n}" for n in sorted(lookup.pending)])
    # A Secret back by name still carrying the labels means the list lagged; one that lost
    # them has left the selection: its callers are revoked.
    selected.update(_selected(lookup.found.values(), labels))
    problem = _secrets_problem(selected, fleet)
    if problem:
        return Callers(requirements=requirements, problem=problem)
    return Callers(
        resources=_composed(inputs, gateway, host, selected, guarded),
        requirements=requirements,
        secrets=sorted(selected),
        identities=_identities(selected),
    )


def _selected(secrets: Iterable[Obj], labels: Mapping[str, str]) -> dict[str, Obj]:
    """The Secrets carrying the selector's labels, by name."""
    return {
        str(s["metadata"]["name"]): s
        for s in secrets
        if isinstance(s.get("metadata"), Mapping) and _matches(s, labels)
    }


def _identities(selected: Mapping[str, Obj]) -> dict[str, dict[str, str]]:
    """Each caller (an entry of a selected Secret) with its Secret's labels."""
    return {
        str(i): {str(k): str(v) for k, v in mapping(s, "metadata", "labels").items()}
        for _, s in sorted(selected.items())
        for i in mapping(s, "data")
    }


def _matches(secret: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    have = mapping(secret, "metadata", "labels")
    return all(have.get(k) == v for k, v in labels.items())


def _held(
    observed: Mapping[str, Obj], requirements: dict[str, Requirement], what: list[str]
) -> Callers:
    """Nothing is decided while the Secrets are read: what was composed is kept as it is."""
    kept = {k: v for k, v in observed.items() if k.startswith(COPY) or k in (POLICY, HEADER_GUARD)}
    return Callers(carry_forward(kept), requirements, what)


def _secrets_problem(selected: Mapping[str, Obj], fleet: Mapping[str, Obj]) -> str:
    """Why the selected Secrets cannot be copied as callers, or "": a fleet certificate's
    Secret, a Secret of another type, or one identity in two Secrets (Envoy Gateway would keep
    the first silently)."""
    field_ = "InferenceGateway spec.auth.callerSecretSelector"
    owners: dict[str, str] = {}
    ca_names = fleet_ca_names(fleet.values())
    for name in sorted(selected):
        what = "the fleet CA Secret" if name in ca_names else issued_secret(name)
        if what:
            return (
                f"{field_} matches Secret {name}, {what}: its key would be copied to the "
                "gateway's cluster; take the caller labels off it. Nothing was changed"
            )
        kind = str(selected[name].get("type") or OPAQUE)
        if kind != OPAQUE:
            return (
                f"{field_} matches Secret {name} of type {kind}: caller Secrets are Opaque, "
                "each entry a caller's identity and its API key. Nothing was changed"
            )
        for identity in sorted(mapping(selected[name], "data")):
            if identity in owners:
                return (
                    f"{field_} matches Secrets {owners[identity]} and {name}, both holding "
                    f"caller {identity!r}: an identity must be in one Secret only. "
                    "Nothing was changed"
                )
            owners[identity] = name
    return ""


def copy_name(gateway: str, secret: str) -> str:
    """The copy's name on the host: per gateway, so two gateways on one host never share one."""
    return dns_label(gateway, "caller", secret)


def _composed(
    inputs: Inputs,
    gateway: str,
    host: ClusterGateway,
    selected: Mapping[str, Obj],
    guarded: tuple[str, ...],
) -> dict[str, Desired]:
    out: dict[str, Desired] = {}
    for name in sorted(selected):
        key = COPY + name
        obj = remote_object(
            dns_label("gw", gateway, "caller", name),
            CONTROL_NAMESPACE,
            host.provider_config,
            secret_copy(copy_name(gateway, name), host.namespace, OPAQUE),
        )
        obj["spec"]["references"] = secret_copy_references(
            CONTROL_NAMESPACE, [(name, i, i) for i in sorted(mapping(selected[name], "data"))]
        )
        out[key] = Desired(obj, ready_as_observed(inputs.observed.get(key)))
    copies = [copy_name(gateway, n) for n in sorted(selected)]
    policy = security_policy(gateway, host, copies, key_header(inputs.composite["spec"]))
    out[POLICY] = on_host(inputs, gateway, host, POLICY, policy)
    out.update(compose_guard(inputs, gateway, host, guarded))
    return out


def on_host(inputs: Inputs, gateway: str, host: ClusterGateway, key: str, manifest: Obj) -> Desired:
    """The gateway's Object ``key`` applying ``manifest`` on its host, in the control namespace."""
    obj = remote_object(
        dns_label("gw", gateway, key), CONTROL_NAMESPACE, host.provider_config, manifest
    )
    return Desired(obj, ready_as_observed(inputs.observed.get(key)))


def compose_guard(
    inputs: Inputs, gateway: str, host: ClusterGateway, guarded: tuple[str, ...]
) -> dict[str, Desired]:
    """The header guard alone. Every front gateway has one, ``spec.auth`` or not: the headers
    only a gateway may set (the identity, the priority, the picker's objective and flow) are
    removed on arrival whether or not this gateway sets them, or its callers could set them."""
    guard = header_guard(gateway, host, guarded)
    return {HEADER_GUARD: on_host(inputs, gateway, host, HEADER_GUARD, guard)}


def front_listener(gateway: str) -> list[Obj]:
    return [listener_ref(front_gateway_name(gateway), FRONT_LISTENER)]


def front_policy(kind: str, gateway: str, suffix: str, host: ClusterGateway, spec: Obj) -> Obj:
    """An Envoy Gateway policy of ``kind`` on every route of the gateway's front HTTPS listener,
    named ``<gateway>-<suffix>``."""
    return {
        "apiVersion": ENVOY_API_VERSION,
        "kind": kind,
        "metadata": managed_metadata(dns_label(gateway, suffix), host.namespace),
        "spec": {"targetRefs": front_listener(gateway), **spec},
    }


def security_policy(gateway: str, host: ClusterGateway, copies: list[str], header: str) -> Obj:
    """API-key authentication on every route of the front HTTPS listener (the ACME listener,
    answering only a certificate challenge, stays open)."""
    auth = {
        "credentialRefs": [{"group": "", "kind": "Secret", "name": c} for c in copies],
        "extractFrom": [{"headers": [header]}],
        "forwardClientIDHeader": CALLER_HEADER,
        "sanitize": True,
    }
    return front_policy("SecurityPolicy", gateway, "callers", host, {"apiKeyAuth": auth})


def header_guard(gateway: str, host: ClusterGateway, guarded: tuple[str, ...] = ()) -> Obj:
    """``x-modelplane-caller`` (and ``guarded``) removed from every request as it arrives,
    before any filter (a route's header filter would run after authentication and remove the
    identity it set)."""
    removed = {"earlyRequestHeaders": {"remove": [CALLER_HEADER, *guarded]}}
    return front_policy("ClientTrafficPolicy", gateway, "caller-guard", host, {"headers": removed})
