"""Where the fleet's gateways may send a tenant's requests: the server-side request forgery guard.

An external ModelEndpoint names a host the gateways' clusters dial (an Envoy Gateway ``Backend``,
which Kubernetes RBAC does not guard: Envoy Gateway's docs warn that a Backend reaches whatever
its proxy can). A tenant may therefore only name the public Internet. Every spelling of an
address is read as a resolver would read it (``127.1``, ``0x7f.0.0.1``, ``2130706433``,
``0177.0.0.1``, ``[::ffff:127.0.0.1]``), so no spelling slips past a check that a canonical form
would fail.

Two classes of host are refused:

- *never*: the gateway itself and the clouds' metadata services (loopback, unspecified,
  link-local, multicast, reserved and broadcast addresses, ``localhost``, the metadata names and
  addresses). No allow list opens them: nothing a provider serves lives there.
- *private*: non-public addresses (RFC 1918, CGNAT, unique-local and site-local IPv6, ...) and
  every name that is not under a public suffix: a name is external only when it ends in a suffix
  of the Public Suffix List's ICANN section and has a label of its own before it
  (``api.openai.com``). Single labels, ``kubernetes.default``, ``prometheus.monitoring``,
  ``x.pod``, ``x.corp``, ``x.lan``, ``*.svc``, ``*.cluster.local``, ``*.internal`` are names only
  a cluster's or a network's own resolver answers. The platform team opens one on the
  InferenceGateway (``spec.egress``), never a tenant.

A name that spells a pod's address (``169-254-169-254.default.pod``: CoreDNS in ``pods
insecure`` mode answers it with that address) is also read as the address, so a metadata or
loopback address spelled so is refused whatever is allowed. What no check here can see is what a
public name resolves to (docs/design/security.md): the gateways' proxies resolve without search
domains (``inferencecluster/gateway.py``), and the platform adds an egress NetworkPolicy.
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from publicsuffixlist import PublicSuffixList

from modelplane.kube import objects

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA_NAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
"""Names the clouds resolve to their instance metadata services."""

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, ... (also link-local)
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IMDS over IPv6 (a unique-local address)
        "100.100.100.200",  # Alibaba Cloud (a CGNAT address)
        "168.63.129.16",  # Azure's WireServer (a public address)
    )
)

LOCAL_SUFFIXES = ("svc", "cluster.local", "internal", "local", "localdomain", "home.arpa")
"""Names a cluster's or a network's own resolver answers, never the public DNS."""

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


@dataclass(frozen=True)
class Allowance:
    """What the platform team lets a gateway reach beyond the public Internet."""

    hosts: tuple[str, ...] = ()
    """Exact names, or ``*.<suffix>`` for every name under the suffix."""
    networks: tuple[Network, ...] = ()

    def allows_name(self, name: str) -> bool:
        return any(
            name.endswith(entry[1:]) if entry.startswith("*.") else name == entry
            for entry in self.hosts
        )

    def allows_address(self, address: IP) -> bool:
        return any(address.version == n.version and address in n for n in self.networks)


@dataclass(frozen=True)
class AddressClass:
    """The class of host a non-public address is in (see the module's docstring)."""

    what: str
    """What the address is, as a refusal names it ("a loopback address")."""
    never: bool = False
    """No allowance opens it; else it is private, for the platform team to open."""


def allowance_of(gateway: Mapping[str, Any]) -> Allowance:
    """The InferenceGateway's ``spec.egress``; an entry that does not parse opens nothing."""
    egress = objects.mapping(gateway, "spec", "egress")
    hosts = tuple(_name(str(h)) for h in egress.get("allowedHosts") or [])
    networks: list[Network] = []
    for cidr in egress.get("allowedCIDRs") or []:
        try:
            networks.append(ipaddress.ip_network(str(cidr), strict=False))
        except ValueError:
            continue
    return Allowance(hosts=hosts, networks=tuple(networks))


def refusal(host: str, allowances: Sequence[Allowance] | None = None) -> str:
    """Why a gateway may not dial ``host`` (empty when it may). With ``allowances`` (one per
    gateway that would carry the traffic), a private host is refused unless every one of them
    allows it; without, only what no allowance could open is refused."""
    name = _name(host)
    address = parse_address(name)
    if address is not None:
        return _address_refusal(host, address, allowances)
    if _numeric(name):
        return f"{host!r} is neither an IP address nor a DNS name"
    return _name_refusal(host, name, allowances)


def _address_refusal(host: str, address: IP, allowances: Sequence[Allowance] | None) -> str:
    """Why a gateway may not dial ``host``, spelled as ``address``."""
    found = _address_class(address)
    if found is None:
        return ""
    if found.never:
        return f"{host!r} is {found.what}, which no gateway may reach"
    if allowances is None or all(a.allows_address(address) for a in allowances):
        return ""
    return (
        f"{host!r} is {found.what}; only the platform team opens it, "
        "in every InferenceGateway's spec.egress.allowedCIDRs"
    )


def _name_refusal(host: str, name: str, allowances: Sequence[Allowance] | None) -> str:
    """Why a gateway may not dial ``host``, the DNS name ``name``."""
    if name == "localhost" or name.endswith(".localhost"):
        return f"{host!r} is the gateway itself, which no gateway may reach"
    if name in METADATA_NAMES:
        return f"{host!r} is a cloud metadata service, which no gateway may reach"
    # CoreDNS (``pods insecure``) answers a pod name with the address it spells.
    pod = _pod_address(name)
    found = _address_class(pod) if pod is not None else None
    if found is not None and found.never:
        return f"{host!r} is a pod name for {pod}, {found.what}, which no gateway may reach"
    local = _local_name(name)
    if local and allowances is not None and not all(a.allows_name(name) for a in allowances):
        return (
            f"{host!r} is {local}; only the platform team opens it, "
            "in every InferenceGateway's spec.egress.allowedHosts"
        )
    return ""


def parse_address(host: str) -> IP | None:
    """``host`` as an IP address in any spelling a resolver accepts, else None."""
    text = host.strip("[]")
    try:
        return _unwrapped(ipaddress.ip_address(text))
    except ValueError:
        pass
    if ":" in text:
        return None
    return _inet_aton(text)


def _address_class(address: IP) -> AddressClass | None:
    """The class the address is in, or None for a public one."""
    if address in METADATA_ADDRESSES:
        return AddressClass("a cloud metadata service", never=True)
    for what, test in (
        ("a loopback address", address.is_loopback),
        ("the unspecified address", address.is_unspecified),
        ("a link-local address", address.is_link_local),
        ("a multicast address", address.is_multicast),
        ("a reserved address", address.is_reserved),
    ):
        if test:
            return AddressClass(what, never=True)
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        # fec0::/10: deprecated (RFC 3879) but still routed inside some sites, and Python's
        # ipaddress calls it global.
        return AddressClass("a site-local address")
    if address.is_global:
        return None
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return AddressClass("a carrier-grade NAT address")
    return AddressClass("a private address")


def _unwrapped(address: IP) -> IP:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64): what the packet reaches."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return address.ipv4_mapped
        if address.sixtofour is not None:
            return address.sixtofour
        if address in _NAT64:
            return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address


def _inet_aton(text: str) -> ipaddress.IPv4Address | None:
    """IPv4 as ``inet_aton`` reads it: one to four parts, each decimal, octal (leading 0) or hex
    (0x), the last filling the remaining bytes."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        value = _number(part)
        if value is None:
            return None
        values.append(value)
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = last
    for i, v in enumerate(head):
        number |= v << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def _number(part: str) -> int | None:
    try:
        if part[:2] in ("0x", "0X"):
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        return int(part, 10) if part.isdigit() else None
    except ValueError:
        return None


def _numeric(name: str) -> bool:
    """A name whose last label is a number in some base: no DNS name ends so, and resolvers
    read such a name as an address."""
    last = name.rsplit(".", 1)[-1]
    return last.isdigit() or (last[:2] == "0x" and all(c in "0123456789abcdef" for c in last[2:]))


def _local_name(name: str) -> str:
    """Why ``name`` is not a public DNS name, or "" when it is one."""
    if "." not in name:
        return "a single-label name, which only a cluster's resolver answers"
    for suffix in LOCAL_SUFFIXES:
        if name.endswith(f".{suffix}"):
            return f"a name under .{suffix}, which only a cluster's resolver answers"
    suffixes = _public_suffixes()
    if suffixes.publicsuffix(name) is None:
        # kubernetes.default, prometheus.monitoring, x.pod, x.corp: a resolver with search
        # domains completes them to a Service or a pod, and no public zone holds them.
        last = name.rsplit(".", 1)[1]
        return (
            f"a name under .{last}, which is no public suffix (the Public Suffix List's ICANN "
            "section), so only a cluster's or a network's own resolver answers it"
        )
    if suffixes.privatesuffix(name) is None:
        return "a public suffix itself, under which others register names, not a host"
    return ""


@functools.cache
def _public_suffixes() -> PublicSuffixList:
    """The ICANN section only: it alone says which names the public DNS holds; the private
    section's entries all sit under ICANN suffixes and mark where one organisation's names end
    (for cookies), which says nothing about where a name resolves (docs/design/security.md).
    ``accept_unknown=False``: a suffix the list does not know is no public suffix. Loaded once
    per process, from the list the package ships (no network)."""
    return PublicSuffixList(only_icann=True, accept_unknown=False)


def _pod_address(name: str) -> IP | None:
    """The address a pod name spells (``a-b-c-d.<namespace>.pod[.<cluster domain>]``, IPv6 with
    ``-`` for ``:``), which CoreDNS answers with whatever address the label spells."""
    labels = name.split(".")
    if len(labels) < 3 or labels[2] != "pod":
        return None
    for text in (labels[0].replace("-", "."), labels[0].replace("-", ":")):
        try:
            return _unwrapped(ipaddress.ip_address(text))
        except ValueError:
            continue
    return None


def _name(host: str) -> str:
    return host.strip().lower().rstrip(".")
