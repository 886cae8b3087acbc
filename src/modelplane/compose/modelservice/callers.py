"""Which callers may use a ModelService (``spec.callers``; docs/design/shared-front-door.md,
"Step 3 as built").

On each gateway serving the service, beside its routes:

- ``callers/<gateway>``: an Envoy Gateway ``SecurityPolicy`` on the service's path HTTPRoute and
  on the HTTPRoute the AI Gateway generates for its model route (named after the
  AIGatewayRoute), with ``mergeType: StrategicMerge`` so it is merged into the gateway's
  listener policy (the ``apiKeyAuth`` of ``spec.auth``) rather than replacing it on these routes,
  and an ``authorization`` allowing only requests whose ``x-modelplane-caller`` (the identity
  the api_key_auth filter set) is one of the service's callers, denying every other;
- ``denied/<gateway>``: a ``BackendTrafficPolicy`` on the same routes (merged the same way, so
  the gateway's budgets still apply) whose ``responseOverride`` turns Envoy's own 403 into a JSON
  body naming the caller, the model and that it is not among the service's callers, and repeats
  the gateway's 429 answer (merging replaces the gateway policy's override list).

The callers are the names, and the identities (entries) of the caller Secrets matching both
the gateway's ``spec.auth.callerSecretSelector`` and the service's ``callers.selector``: the
service lists those Secrets itself (``caller-secrets/<gateway>``). Evidence, not absence: while
that list is not read, a policy composed before is kept as it is; with none yet, the policy
allows the names alone (it never opens more than asked). A gateway without ``spec.auth`` cannot
tell callers apart: naming callers on it is refused, naming both fields.

tests/conformance/test_envoy_gateway_authorization.py cites each Envoy Gateway behaviour this
relies on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.shared.frontdoor import (
    CALLER_HEADER,
    CONTROL_NAMESPACE,
    ENVOY_API_VERSION,
    GATEWAY_GROUP,
    ClusterGateway,
    budget_spent,
    caller_secret_selector,
)
from modelplane.compose.shared.remote import managed_metadata
from modelplane.composer import Desired, Requirement
from modelplane.kube.names import unique_label
from modelplane.kube.objects import Obj, mapping
from modelplane.observed import carried, ready_as_observed

POLICY = "callers"
"""Composition resource name prefix of a gateway's authorization: ``callers/<gateway>``."""
DENIED = "denied"
"""Prefix of its 403 body: ``denied/<gateway>``."""
SECRETS = "caller-secrets"
"""Requirement prefix listing a gateway's caller Secrets the service selects:
``caller-secrets/<gateway>``."""
MAX_VALUES = 256
"""Values one authorization header match holds (Envoy Gateway v1.8.1
``AuthorizationHeaderMatch.Values``): longer caller lists are split over several rules."""
MERGE = "StrategicMerge"


def wanted_callers(spec: Mapping[str, Any]) -> bool:
    return isinstance(spec.get("callers"), Mapping)


def callers_problem(spec: Mapping[str, Any]) -> str | None:
    """Why ``spec.callers`` is malformed, or None (the XRD refuses the same at admission; an
    older XRD or a rendered fleet may not)."""
    if "callers" not in spec:
        return None
    given = spec["callers"]
    if not isinstance(given, Mapping) or not (given.get("names") or selector(spec)):
        return (
            "ModelService spec.callers takes names or selector.matchLabels (or both); omit "
            "callers to let every authenticated caller use the service"
        )
    return None


def names(spec: Mapping[str, Any]) -> list[str]:
    return sorted({str(n) for n in mapping(spec, "callers").get("names") or ()})


def selector(spec: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping(spec, "callers", "selector", "matchLabels").items()}


def auth_problem(namespace: str, service: str, ig: Mapping[str, Any]) -> str:
    """Why the service's callers cannot be told apart on gateway ``ig``, or ""."""
    if isinstance(mapping(ig, "spec").get("auth"), Mapping):
        return ""
    gateway = str(mapping(ig, "metadata").get("name"))
    return (
        f"ModelService {namespace}/{service} spec.callers names who may use it, but "
        f"InferenceGateway {gateway}, which serves it, has no spec.auth: nothing there tells "
        "callers apart. Add spec.auth to the gateway, or leave the service out of its "
        "spec.serviceSelector. Nothing was changed"
    )


def secrets_requirement(spec: Mapping[str, Any], ig: Mapping[str, Any]) -> Requirement | None:
    """The caller Secrets of gateway ``ig`` whose labels match the service's selector too; None
    when the service selects none by label (or the two selectors contradict each other)."""
    own, gateway = selector(spec), caller_secret_selector(mapping(ig, "spec"))
    if not own or any(gateway.get(k, v) != v for k, v in own.items()):
        return None
    return Requirement("v1", "Secret", match_labels=gateway | own, namespace=CONTROL_NAMESPACE)


def identities(secrets: list[Obj], labels: Mapping[str, str]) -> list[str]:
    """The callers (entry keys) of the Secrets carrying ``labels``."""
    out: set[str] = set()
    for secret in secrets:
        have = mapping(secret, "metadata", "labels")
        if all(have.get(k) == v for k, v in labels.items()):
            out |= {str(i) for i in mapping(secret, "data")}
    return sorted(out)


@dataclass
class Callers:
    """What ``spec.callers`` composes on the serving gateways: the manifests (per composition
    resource name), the Objects kept as observed while a list is read, and the requirements."""

    manifests: dict[str, Obj] = field(default_factory=dict)
    kept: dict[str, Desired] = field(default_factory=dict)
    requirements: dict[str, Requirement] = field(default_factory=dict)


def compose(
    spec: Mapping[str, Any],
    namespace: str,
    service: str,
    gateway: Mapping[str, Any],
    host: ClusterGateway,
    routes: list[str],
    required: Mapping[str, list[Obj]],
    observed: Mapping[str, Obj],
) -> Callers:
    """The authorization and 403 body of the service on one gateway, over ``routes`` (the
    HTTPRoutes the service's requests take there)."""
    name = str(mapping(gateway, "metadata").get("name"))
    out = Callers()
    allowed = set(names(spec))
    wanted = secrets_requirement(spec, gateway)
    key = f"{POLICY}/{name}"
    if wanted is not None:
        out.requirements[f"{SECRETS}/{name}"] = wanted
        listed = required.get(f"{SECRETS}/{name}")
        if listed is None and key in observed:
            out.kept[key] = Desired(carried(observed[key]), ready_as_observed(observed[key]))
        elif listed is not None:
            allowed |= set(identities(listed, dict(wanted.match_labels or {})))
    if key not in out.kept:
        out.manifests[key] = security_policy(name, host, namespace, service, routes, allowed)
    out.manifests[f"{DENIED}/{name}"] = denied_policy(name, host, namespace, service, routes)
    return out


def _merged_policy(kind: str, name: str, host: ClusterGateway, routes: list[str], spec: Obj) -> Obj:
    """An Envoy Gateway policy of ``kind`` on ``routes``, merged into the gateway's listener
    policy of that kind."""
    targets = [{"group": GATEWAY_GROUP, "kind": "HTTPRoute", "name": r} for r in routes]
    return {
        "apiVersion": ENVOY_API_VERSION,
        "kind": kind,
        "metadata": managed_metadata(name, host.namespace),
        "spec": {"targetRefs": targets, "mergeType": MERGE, **spec},
    }


def security_policy(
    gateway: str,
    host: ClusterGateway,
    namespace: str,
    service: str,
    routes: list[str],
    allowed: set[str],
) -> Obj:
    """Only ``allowed`` callers on the service's routes, merged into the gateway's listener
    policy so its API-key authentication stays on them. No caller allowed: every request is
    denied (``defaultAction: Deny`` and no rule)."""
    callers = sorted(allowed)
    rules = [
        {
            "name": f"callers-{i // MAX_VALUES}",
            "action": "Allow",
            "principal": {
                "headers": [{"name": CALLER_HEADER, "values": callers[i : i + MAX_VALUES]}]
            },
        }
        for i in range(0, len(callers), MAX_VALUES)
    ]
    authorization: Obj = {"defaultAction": "Deny"}
    if rules:
        authorization["rules"] = rules
    name = unique_label(gateway, namespace, service, "callers")
    return _merged_policy("SecurityPolicy", name, host, routes, {"authorization": authorization})


def denied_body(namespace: str, service: str) -> str:
    """The 403's JSON body; Envoy fills in the caller (a command operator of its response
    body format; an identity is a Secret key: alphanumerics, -, _ and ., nothing to escape)."""
    model = f"{namespace}/{service}"
    body = {
        "error": {
            "code": 403,
            "message": (
                f"caller %REQ({CALLER_HEADER})% may not use model {model}: it is not among "
                f"the callers of ModelService {model} (spec.callers)"
            ),
            "type": "forbidden",
        }
    }
    return json.dumps(body, sort_keys=True)


def denied_policy(
    gateway: str, host: ClusterGateway, namespace: str, service: str, routes: list[str]
) -> Obj:
    """Envoy's own 403s on the service's routes (``source: Local``: never an engine's or a
    provider's) answered with ``denied_body``; merged into the gateway's listener policy so its
    budgets stay on these routes."""
    name = unique_label(gateway, namespace, service, "denied")
    denied = {
        "match": {"statusCodes": [{"type": "Value", "value": 403}]},
        "source": "Local",
        "response": {
            "statusCode": 403,
            "contentType": "application/json",
            "body": {"type": "Inline", "inline": denied_body(namespace, service)},
        },
    }
    spec = {"responseOverride": [denied, budget_spent()]}
    return _merged_policy("BackendTrafficPolicy", name, host, routes, spec)
