"""What traffic would do, read from the composed objects as the gateways read them.

``Fabric`` holds every object provider-kubernetes Objects carry to each workload cluster (and the
InferenceClusters' published gateway addresses). ``Fabric.send`` follows one request the way the
data plane would: the listener it arrives at, the HTTPRoutes attached there (parentRef and
sectionName, the listener's allowedRoutes and hostname), the rule that matches (longest path
prefix, then most header matches), the rule's filters, then each weighted backendRef with its own
filters: a Backend that is another cluster's gateway address is followed onto that cluster's
listener of the port dialled; an InferencePool, a 503 direct response or an address outside the
fleet ends the walk. The weights along the way multiply into each destination's share.

``modelplane routes`` prints these destinations, so its table shows what the objects say, not
what the composer meant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction

from modelplane.kube import objects
from modelplane.kube.objects import Obj

OBJECT = ("kubernetes.m.crossplane.io/v1alpha1", "Object")
GATEWAY_GROUP = "gateway.networking.k8s.io"
HOPS_MAX = 8
"""A walk longer than this is a loop between gateways."""


@dataclass(frozen=True)
class Request:
    host: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    client_certificate: str = ""
    """The Secret (``cluster/namespace/name``) whose certificate the sender presents."""


@dataclass(frozen=True)
class Destination:
    """Where a share of the requests ends: an InferencePool, a direct response, or an address
    outside the fleet."""

    kind: str
    """``InferencePool``, ``DirectResponse``, ``External``, ``Unrouted`` (404), or ``Refused``
    (the listener's TLS handshake fails: no client certificate, or one the listener's CA did not
    sign)."""
    cluster: str
    name: str
    """The pool (``namespace/name``), the HTTPRouteFilter, the external host, or why unrouted."""
    share: Fraction
    path: str
    """The path as it arrives there."""
    hops: tuple[str, ...]
    """``cluster/gateway/listener`` per gateway crossed."""
    client_certificate: tuple[bool, ...]
    """Per gateway crossed, whether its listener required a client certificate."""
    backend: str = ""
    """For an external address, the Backend (``namespace/name``) that dials it."""


@dataclass(frozen=True)
class Listener:
    cluster: str
    gateway: Obj
    spec: Obj

    @property
    def name(self) -> str:
        return str(self.spec.get("name"))

    @property
    def label(self) -> str:
        meta = self.gateway["metadata"]
        return f"{self.cluster}/{meta.get('namespace')}/{meta['name']}/{self.name}"


@dataclass(frozen=True)
class _Leg:
    """Where a walk stands at one listener: its cluster, the share of the requests that reach
    it, and the gateways crossed so far (``Destination.hops`` and ``client_certificate``)."""

    cluster: str
    share: Fraction
    hops: tuple[str, ...]
    certs: tuple[bool, ...]

    def end(self, kind: str, name: str, path: str, backend: str = "") -> list[Destination]:
        """The walk ending here, at ``name`` of ``kind``, with the path as it arrives."""
        return [
            Destination(kind, self.cluster, name, self.share, path, self.hops, self.certs, backend)
        ]

    def part(self, fraction: Fraction) -> _Leg:
        """This leg's share split: the part one weighted backendRef carries on."""
        return replace(self, share=self.share * fraction)


CONTROL_PLANE = ""
"""The cluster name under which the control plane's own objects (cert-manager's Issuers and
Certificates there, composed directly rather than through an Object) are kept."""


class Fabric:
    def __init__(self, docs: Iterable[Obj]) -> None:
        self.objects: dict[str, list[Obj]] = {}
        self.addresses: dict[str, str] = {}
        self.copied_from: dict[tuple[str, str], dict[str, str]] = {}
        """(cluster, namespace/name) of a Secret -> per data key, the control-plane Secret
        (``namespace/name``) provider-kubernetes patches that key from."""
        for doc in docs:
            if (doc.get("apiVersion"), doc.get("kind")) == OBJECT:
                spec = doc.get("spec") or {}
                manifest = objects.dig(spec, "forProvider", "manifest")
                cluster = str(objects.dig(spec, "providerConfigRef", "name") or "")
                if manifest:
                    self.objects.setdefault(cluster, []).append(manifest)
                    self._note_copy(cluster, manifest, spec.get("references") or [])
            elif str(doc.get("apiVersion", "")).startswith("cert-manager.io/"):
                self.objects.setdefault(CONTROL_PLANE, []).append(doc)
            elif doc.get("kind") == "InferenceCluster":
                gateway = objects.mapping(doc, "status", "gateway")
                if gateway.get("address"):
                    self.addresses[str(gateway["address"]).lower()] = doc["metadata"]["name"]

    def _note_copy(self, cluster: str, manifest: Obj, references: list[Obj]) -> None:
        if manifest.get("kind") != "Secret":
            return
        meta = manifest["metadata"]
        secret = f"{meta.get('namespace', '')}/{meta['name']}"
        keys = self.copied_from.setdefault((cluster, secret), {})
        for ref in references:
            source = ref.get("patchesFrom") or {}
            if source.get("kind") == "Secret":
                key = _data_key(str(ref.get("toFieldPath") or source.get("fieldPath") or ""))
                keys[key] = f"{source.get('namespace', '')}/{source.get('name')}"

    def copy_source(self, cluster: str, secret: str, key: str) -> str:
        """The control-plane Secret that ``key`` of ``secret`` on ``cluster`` is copied from."""
        return self.copied_from.get((cluster, secret), {}).get(key, "")

    def issuing_ca(self, cluster: str, secret: str) -> str:
        """The control-plane Secret whose CA signed the certificate in ``secret``
        (``namespace/name`` on ``cluster``): the Certificate cert-manager writes it from (on the
        cluster, or on the control plane when the Secret is a copy of one there), that
        Certificate's CA Issuer, and the Secret the Issuer signs with; "" when a link is
        missing."""
        namespace, _, name = secret.partition("/")
        certificates = self.of_kind(cluster, "Certificate", namespace)
        written = [c for c in certificates if objects.dig(c, "spec", "secretName") == name]
        if not written:
            source = self.copy_source(cluster, secret, "tls.crt")
            if cluster == CONTROL_PLANE or not source:
                return ""
            return self.issuing_ca(CONTROL_PLANE, source)
        issuer_ref = written[0]["spec"].get("issuerRef") or {}
        if issuer_ref.get("kind", "Issuer") != "Issuer":
            return ""
        issuer = self._named(cluster, "Issuer", namespace, str(issuer_ref.get("name")))
        ca_secret = objects.dig(issuer, "spec", "ca", "secretName")
        if not ca_secret:
            return ""
        if cluster == CONTROL_PLANE:
            return f"{namespace}/{ca_secret}"
        return self.copy_source(cluster, f"{namespace}/{ca_secret}", "tls.crt")

    def of_kind(self, cluster: str, kind: str, namespace: str | None = None) -> list[Obj]:
        return [
            o
            for o in self.objects.get(cluster, [])
            if o.get("kind") == kind
            and namespace in (None, objects.dig(o, "metadata", "namespace", default=""))
        ]

    def _named(self, cluster: str, kind: str, namespace: str, name: str) -> Obj | None:
        return next(
            (o for o in self.of_kind(cluster, kind, namespace) if o["metadata"]["name"] == name),
            None,
        )

    def listeners(self, cluster: str) -> list[Listener]:
        return [
            Listener(cluster, gw, listener)
            for gw in self.of_kind(cluster, "Gateway")
            for listener in objects.spec(gw).get("listeners") or []
        ]

    def attached(self, listener: Listener) -> list[Obj]:
        """The HTTPRoutes the listener admits: a parentRef naming its Gateway (and its section,
        when the parentRef names one), from a namespace its allowedRoutes admit."""
        gw = listener.gateway["metadata"]
        allowed = objects.dig(listener.spec, "allowedRoutes", "namespaces", "from", default="Same")
        out = []
        for route in self.of_kind(listener.cluster, "HTTPRoute"):
            namespace = route["metadata"].get("namespace", "")
            if allowed == "Same" and namespace != gw.get("namespace"):
                continue
            for ref in objects.spec(route).get("parentRefs") or []:
                if (
                    ref.get("kind", "Gateway") == "Gateway"
                    and ref.get("group", GATEWAY_GROUP) == GATEWAY_GROUP
                    and ref.get("name") == gw["name"]
                    and ref.get("namespace", namespace) == gw.get("namespace")
                    and ref.get("sectionName") in (None, listener.name)
                    and ref.get("port") in (None, listener.spec.get("port"))
                ):
                    out.append(route)
                    break
        return out

    def requires_client_certificate(self, listener: Listener) -> list[str]:
        """The Secrets (``namespace/name``) of the CA certificates a client must present a
        certificate signed by on this listener: Envoy Gateway's ClientTrafficPolicy
        ``tls.clientValidation`` targeting the listener's section or its whole Gateway."""
        gw = listener.gateway["metadata"]
        namespace = gw.get("namespace", "")
        out: list[str] = []
        for policy in self.of_kind(listener.cluster, "ClientTrafficPolicy", namespace):
            spec = policy.get("spec") or {}
            targets = spec.get("targetRefs") or []
            if not any(
                t.get("kind") == "Gateway"
                and t.get("name") == gw["name"]
                and t.get("sectionName") in (None, listener.name)
                for t in targets
            ):
                continue
            validation = objects.mapping(spec, "tls", "clientValidation")
            if validation.get("optional"):
                continue
            out.extend(
                f"{namespace}/{ref['name']}" for ref in validation.get("caCertificateRefs") or []
            )
        return out

    def send(self, listener: Listener, request: Request) -> list[Destination]:
        """Where requests like ``request`` arriving at ``listener`` end, with their shares."""
        return self._walk(listener, request, _Leg(listener.cluster, Fraction(1), (), ()))

    def _walk(self, listener: Listener, request: Request, came: _Leg) -> list[Destination]:
        """Where ``request`` ends from ``listener``, reached as ``came`` says."""
        required = self.requires_client_certificate(listener)
        hops, certs = (*came.hops, listener.label), (*came.certs, bool(required))
        leg = _Leg(listener.cluster, came.share, hops, certs)
        if required and not self._trusted(listener.cluster, required, request):
            why = f"{listener.label} requires a client certificate"
            return leg.end("Refused", why, request.path)
        if len(leg.hops) > HOPS_MAX:
            return leg.end("Unrouted", "a loop between gateways", request.path)
        if not _host_matches(listener.spec.get("hostname"), request.host):
            why = f"listener {listener.label} does not serve {request.host}"
            return leg.end("Unrouted", why, request.path)
        found = self._rule(listener, request)
        if found is None:
            why = f"no rule on {listener.label} matches {request.path}"
            return leg.end("Unrouted", why, request.path)
        return self._through(found, request, leg)

    def _trusted(self, cluster: str, required: list[str], request: Request) -> bool:
        """Whether the certificate the sender presents is signed by a CA the listener requires."""
        # Envoy Gateway reads a caCertificateRef's ``ca.crt``.
        trusted = {self.copy_source(cluster, ca, "ca.crt") for ca in required} - {""}
        sender, _, secret = request.client_certificate.partition("/")
        presented = self.issuing_ca(sender, secret) if secret else ""
        return bool(presented) and presented in trusted

    def _through(
        self, found: tuple[Obj, Obj, str], request: Request, leg: _Leg
    ) -> list[Destination]:
        """Where the matched rule sends the request: through its filters, then to each
        weighted backendRef."""
        route, rule, prefix = found
        namespace = route["metadata"].get("namespace", "")
        headers = dict(request.headers)
        path = request.path
        for f in rule.get("filters") or []:
            if f.get("type") == "ExtensionRef":
                ref = f["extensionRef"]
                flt = self._named(leg.cluster, ref["kind"], namespace, ref["name"])
                if objects.dig(flt, "spec", "directResponse"):
                    return leg.end("DirectResponse", f"{namespace}/{ref['name']}", request.path)
            headers = _modify(headers, f)
            path = _rewrite(path, prefix, f)
        refs = rule.get("backendRefs") or []
        total = sum(int(r.get("weight", 1)) for r in refs)
        if refs and not total:
            # Envoy Gateway v1.8.1 (internal/gatewayapi/route.go): no weighted destination left.
            return leg.end("DirectResponse", "500: every backendRef weighs 0", request.path)
        out: list[Destination] = []
        for ref in refs:
            weight = int(ref.get("weight", 1))
            if weight:
                part = leg.part(Fraction(weight, total))
                out.extend(self._to_ref(ref, namespace, headers, path, part))
        return out

    def _to_ref(
        self, ref: Obj, namespace: str, headers: dict[str, str], path: str, leg: _Leg
    ) -> list[Destination]:
        """Where one backendRef sends its share, with its own filters applied."""
        sent = dict(headers)
        for f in ref.get("filters") or []:
            sent = _modify(sent, f)
        kind, group = ref.get("kind", "Service"), ref.get("group", "")
        if kind == "Backend" and group == "gateway.envoyproxy.io":
            backend = self._named(leg.cluster, "Backend", namespace, ref["name"])
            return self._backend(backend, namespace, sent, path, leg)
        # Any other backend (an InferencePool, a Service) ends the walk.
        name = f"{ref.get('namespace', namespace)}/{ref['name']}"
        return leg.end(kind, name, path)

    def _backend(
        self, backend: Obj | None, namespace: str, headers: dict[str, str], path: str, leg: _Leg
    ) -> list[Destination]:
        if backend is None:
            return leg.end("Unrouted", "a missing Backend", path)
        spec = backend.get("spec") or {}
        host, port = _endpoint(spec)
        target = self.addresses.get(host)
        tls = spec.get("tls") or {}
        if target is None:
            name = f"{namespace}/{backend['metadata']['name']}"
            return leg.end("External", host, path, backend=name)
        sni = str(tls.get("sni") or host)
        cert = objects.dig(tls, "clientCertificateRef", "name", default="")
        listener = self._listening(target, port, sni)
        if listener is None:
            return replace(leg, cluster=target).end("Unrouted", f"no listener on port {port}", path)
        presented = f"{leg.cluster}/{namespace}/{cert}" if cert else ""
        return self._walk(listener, Request(sni, path, headers, presented), leg)

    def _listening(self, cluster: str, port: object, host: str) -> Listener | None:
        """The first listener on ``cluster`` at ``port`` serving ``host``."""
        at_port = [li for li in self.listeners(cluster) if li.spec.get("port") == port]
        return next((li for li in at_port if _host_matches(li.spec.get("hostname"), host)), None)

    def _rule(self, listener: Listener, request: Request) -> tuple[Obj, Obj, str] | None:
        """The matching rule of highest precedence (Gateway API: longest path prefix, then most
        header matches, then the oldest route, approximated by namespace/name, then rule order)."""
        best: tuple[tuple[int, int], Obj, Obj, str] | None = None
        routes = sorted(
            self.attached(listener),
            key=lambda r: (r["metadata"].get("namespace", ""), r["metadata"]["name"]),
        )
        for route in routes:
            for rank, rule, prefix in _matching_rules(route, request):
                if best is None or rank > best[0]:
                    best = (rank, route, rule, prefix)
        return None if best is None else best[1:]


def _matching_rules(route: Obj, request: Request) -> Iterator[tuple[tuple[int, int], Obj, str]]:
    """Each rule of ``route`` with a match ``request`` meets, ranked (path prefix length,
    header matches) with its matched prefix; none when the route serves another host."""
    hostnames = objects.spec(route).get("hostnames") or []
    if hostnames and not any(_host_matches(h, request.host) for h in hostnames):
        return
    for rule in objects.spec(route).get("rules") or []:
        for match in rule.get("matches") or [{"path": {"value": "/"}}]:
            prefix = _matches(match, request)
            if prefix is not None:
                yield (len(prefix), len(match.get("headers") or [])), rule, prefix


def _endpoint(spec: Obj) -> tuple[str, object]:
    """The host (lowercased) and port of a Backend's first endpoint."""
    [endpoint] = (spec.get("endpoints") or [{}])[:1] or [{}]
    address = endpoint.get("ip") or endpoint.get("fqdn") or {}
    host = str(address.get("address") or address.get("hostname") or "").lower()
    return host, address.get("port")


def _host_matches(pattern: str | None, host: str) -> bool:
    if not pattern:
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return pattern.lower() == host.lower()


def _matches(match: Obj, request: Request) -> str | None:
    """The matched path prefix, or None when the match does not hold."""
    path = match.get("path") or {"type": "PathPrefix", "value": "/"}
    value = str(path.get("value", "/"))
    if path.get("type", "PathPrefix") == "Exact":
        if request.path != value:
            return None
    elif not _under(request.path, value):
        return None
    for header in match.get("headers") or []:
        if request.headers.get(str(header["name"]).lower()) != header.get("value"):
            return None
    return value


def _under(path: str, prefix: str) -> bool:
    """Gateway API PathPrefix: element-wise, a trailing slash ignored."""
    stem = prefix.rstrip("/")
    return path == stem or path.startswith(stem + "/") or not stem


def _modify(headers: dict[str, str], f: Obj) -> dict[str, str]:
    if f.get("type") != "RequestHeaderModifier":
        return headers
    spec = f.get("requestHeaderModifier") or {}
    out = dict(headers)
    for name in spec.get("remove") or []:
        out.pop(str(name).lower(), None)
    for h in [*(spec.get("set") or []), *(spec.get("add") or [])]:
        out[str(h["name"]).lower()] = str(h["value"])
    return out


def _rewrite(path: str, prefix: str, f: Obj) -> str:
    if f.get("type") != "URLRewrite":
        return path
    rewrite = objects.mapping(f, "urlRewrite", "path")
    if rewrite.get("type") == "ReplacePrefixMatch":
        rest = path[len(prefix.rstrip("/")) :].lstrip("/")
        return str(rewrite["replacePrefixMatch"]).rstrip("/") + "/" + rest
    if rewrite.get("type") == "ReplaceFullPath":
        return str(rewrite["replaceFullPath"])
    return path


def _data_key(field_path: str) -> str:
    """``data[tls.crt]`` -> ``tls.crt``; a path naming no key -> ""."""
    head, _, rest = field_path.partition("[")
    return rest.rstrip("]") if head == "data" and rest else ""
