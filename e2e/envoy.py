"""A stand-in for the front gateway's Envoy, for what scale to zero needs of it: how it answers a
path-form request by the routes Modelplane composed, and the per-cluster request counter its
Prometheus stats export (docs/design/autoscaling.md, "Scale to zero behind the front door").

Envoy is C++ built with Bazel: no Go module, no package here. The stand-in reads the real
HTTPRoutes and HTTPRouteFilters on the gateway's cluster and answers as Envoy Gateway v1.8.1
translates them and Envoy v1.38.1 runs them, each rule cited in
tests/conformance/test_scale_to_zero_path.py:

- a route's rule is matched by the longest PathPrefix on the listener (Gateway API's matching
  precedence; header matches must all hold);
- a rule whose filter is an HTTPRouteFilter with ``directResponse`` is answered by it
  (``internal/gatewayapi/filters.go``), its ``header.set`` as response headers, and counted in
  no cluster (Envoy's router, ``source/common/router/router.cc``, returns before the cluster
  lookup);
- otherwise the request goes upstream through the rule's weighted backendRefs, counted in the
  rule's cluster ``httproute/<ns>/<route>/rule/<i>`` (``internal/gatewayapi/helpers.go``
  ``irRouteDestinationName``) as ``envoy_cluster_upstream_rq_total``; a ref's
  RequestHeaderModifier sets and removes headers on the way (``filters.go``); a Backend to the
  gateway's own fleet listener is matched again there.

``Stats`` serves the counters in Prometheus's text format for every rule's cluster, zero before
the first request (the gateway PodMonitor scrapes ``/stats/prometheus`` without ``usedonly``).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from e2e.exposition import serve as serve_text
from e2e.kubernetes import Cluster
from modelplane.compose.shared.frontdoor import FLEET_LISTENER, FRONT_LISTENER
from modelplane.compose.shared.scaletozero import ACTIVATION_SERIES, rule_cluster

Obj = dict[str, Any]


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: str
    counted: tuple[str, ...]
    """The clusters whose request counter the request raised."""


def _matches(match: Obj, path: str, headers: dict[str, str]) -> int:
    """The prefix length a rule's match takes ``path`` with, or -1."""
    prefix = str((match.get("path") or {}).get("value", "/"))
    if not (path == prefix or path.startswith(prefix.rstrip("/") + "/")):
        return -1
    for h in match.get("headers") or []:
        if headers.get(str(h["name"]).lower()) != h["value"]:
            return -1
    return len(prefix)


def _attached(route: Obj, section: str) -> bool:
    return any(p.get("sectionName") == section for p in route["spec"].get("parentRefs") or [])


def _rule(routes: list[Obj], section: str, path: str, headers: dict[str, str]) -> Any:
    """The (route, rule index, rule) a request takes on a listener: the longest prefix wins."""
    best, taken = -1, None
    for route in routes:
        if not _attached(route, section):
            continue
        for i, rule in enumerate(route["spec"].get("rules") or []):
            for match in rule.get("matches") or []:
                length = _matches(match, path, headers)
                if length > best:
                    best, taken = length, (route, i, rule)
    return taken


def _direct(rule: Obj, filters: dict[str, Obj]) -> Answer | None:
    for f in rule.get("filters") or []:
        ref = f.get("extensionRef") or {}
        response = (filters.get(str(ref.get("name"))) or {}).get("spec", {}).get("directResponse")
        if response:
            set_ = (response.get("header") or {}).get("set") or []
            out = {h["name"]: h["value"] for h in set_}
            if "contentType" in response:
                out["Content-Type"] = response["contentType"]
            body = (response.get("body") or {}).get("inline", "")
            return Answer(int(response.get("statusCode", 200)), out, body, ())
    return None


def _forwarded(ref: Obj, headers: dict[str, str]) -> dict[str, str]:
    out = dict(headers)
    for f in ref.get("filters") or []:
        modifier = f.get("requestHeaderModifier") or {}
        for name in modifier.get("remove") or []:
            out.pop(str(name).lower(), None)
        for h in modifier.get("set") or []:
            out[str(h["name"]).lower()] = str(h["value"])
    return out


def respond(
    routes: list[Obj],
    filters: dict[str, Obj],
    section: str,
    path: str,
    headers: dict[str, str],
    counted: tuple[str, ...] = (),
) -> Answer:
    """How the gateway answers a request on a listener (``section``) by ``routes``."""
    taken = _rule(routes, section, path, headers)
    if taken is None:
        return Answer(404, {}, "no route", counted)
    route, index, rule = taken
    direct = _direct(rule, filters)
    if direct is not None:
        return Answer(direct.status, direct.headers, direct.body, counted)
    weighted = [r for r in rule.get("backendRefs") or [] if r.get("weight", 1) > 0]
    if not weighted:
        return Answer(500, {}, "no destination", counted)
    meta = route["metadata"]
    counted = (*counted, rule_cluster(meta["namespace"], meta["name"], index))
    if section == FLEET_LISTENER:
        return Answer(200, {}, f"served by {weighted[0].get('name')}", counted)
    # The fleet listeners are reached through Backends; on this one cluster, every lane's fleet
    # listener is its own.
    return respond(routes, filters, FLEET_LISTENER, path, _forwarded(weighted[0], headers), counted)


@dataclass
class FrontDoor:
    """The front gateway's Envoy on ``cluster``: ``request`` answers a path-form request."""

    cluster: Cluster
    stats: Counter[str] = field(default_factory=Counter)

    def routes(self) -> tuple[list[Obj], dict[str, Obj]]:
        routes = self.cluster.get("httproutes", "--all-namespaces")["items"]
        filters = self.cluster.get("httproutefilters", "--all-namespaces")["items"]
        return routes, {f["metadata"]["name"]: f for f in filters}

    def clusters(self) -> list[str]:
        """Every rule's cluster on the cluster's gateways."""
        routes, _filters = self.routes()
        return [
            rule_cluster(r["metadata"]["namespace"], r["metadata"]["name"], i)
            for r in routes
            for i, _rule in enumerate(r["spec"].get("rules") or [])
        ]

    def request(self, path: str) -> Answer:
        """Answers a request, counting it as Envoy would."""
        routes, filters = self.routes()
        answer = respond(routes, filters, FRONT_LISTENER, path, {})
        self.stats.update(answer.counted)
        return answer

    def answer(self, path: str) -> Answer:
        """How a request would be answered now, counting nothing."""
        routes, filters = self.routes()
        return respond(routes, filters, FRONT_LISTENER, path, {})


@dataclass
class Stats:
    """The front door's counters as Envoy's ``/stats/prometheus`` shows them, on loopback."""

    door: FrontDoor
    _known: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def exposition(self) -> str:
        lines = [f"# TYPE {ACTIVATION_SERIES} counter"]
        for name in sorted(set(self._known) | set(self.door.stats)):
            value = self.door.stats.get(name, 0)
            lines.append(f'{ACTIVATION_SERIES}{{envoy_cluster_name="{name}"}} {value}')
        return "\n".join(lines) + "\n"

    def serve(self) -> int:
        """Serves the exposition on a loopback port (returned) and keeps the list of clusters
        fresh from the routes every two seconds."""
        self._server = serve_text(self.exposition)
        threading.Thread(target=self._refresh, daemon=True).start()
        return int(self._server.server_address[1])

    def _refresh(self) -> None:
        while not self._stop.is_set():
            try:
                self._known = self.door.clusters()
            except Exception as error:  # the API server may be stopping: report and retry
                print(f"envoy stand-in: {error}", flush=True)
            self._stop.wait(2)

    def stop(self) -> None:
        self._stop.set()
        if hasattr(self, "_server"):
            self._server.shutdown()
