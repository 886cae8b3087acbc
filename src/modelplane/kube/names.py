"""Generated Kubernetes names that fit, stay stable, and never collide by truncation."""

from __future__ import annotations

import functools
import hashlib
import re

DNS_LABEL_MAX = 63
LABEL_VALUE_MAX = 63
"""A label value's longest (apimachinery validation.LabelValueMaxLength)."""
_HASH_LEN = 8
_LONG_HASH_LEN = 20
"""80 bits: a name whose readable head drops a part a tenant chooses (``unique_label``)."""
_INVALID = re.compile(r"[^a-z0-9-]+")
# Names that become Service names (a LeaderWorkerSet's or PodCliqueSet's headless Service, the
# picker's Service) must be DNS-1035 labels: a leading digit gets this prefix.
LETTER_PREFIX = "mp-"


def short_hash(*parts: str, length: int = _HASH_LEN) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:length]


# Names are pure functions of their parts, and every reconcile of a replica asks for the same
# dozen: hashing them once per process keeps them off the compose path.
@functools.lru_cache(maxsize=8192)
def dns_label(*parts: str, max_len: int = DNS_LABEL_MAX) -> str:
    """Join parts into a DNS-1123 label of at most ``max_len`` characters.

    A single valid part that fits is returned unchanged. Anything else carries a hash of the
    parts as given: joining alone is ambiguous (``a-b`` + ``c`` and ``a`` + ``b-c`` both read
    ``a-b-c``), and truncation must not make two long names equal.
    """
    joined = "-".join(p for p in parts if p)
    if len(parts) == 1 and len(joined) <= max_len and _is_label(joined):
        return joined
    clean = _INVALID.sub("-", joined.lower()).strip("-")
    return _with_suffix(clean, short_hash(*parts), max_len)


@functools.lru_cache(maxsize=8192)
def unique_label(*parts: str) -> str:
    """``dns_label(*parts)`` while the joined parts fit whole beside its 8-character hash;
    past that, a shorter head beside an 80-bit one.

    For names that tenants' objects share one namespace under (a gateway's front routes): cut,
    a name keeps only its head, so whoever chooses a part past the cut can try names until
    the 32-bit hash matches another's (about a core-hour), and takes over that object. Whole,
    the joined parts split only a few ways, which leaves nothing to search, so those names
    stay exactly as ``dns_label`` made them. The layouts never meet: ``dns_label``'s names,
    whole or cut, have a hyphen ninth from their end, where a long-hashed one has a digit of
    its hash.
    """
    clean = _INVALID.sub("-", "-".join(p for p in parts if p).lower()).strip("-")
    if len(clean) <= DNS_LABEL_MAX - _HASH_LEN - 1:
        return dns_label(*parts)
    return _with_suffix(clean, short_hash(*parts, length=_LONG_HASH_LEN), DNS_LABEL_MAX)


def _with_suffix(clean: str, suffix: str, max_len: int) -> str:
    """``<clean>-<suffix>`` in at most ``max_len`` characters, ``clean`` cut to fit (the suffix
    alone when nothing of it does)."""
    head = clean[: max_len - len(suffix) - 1].rstrip("-")
    return f"{head}-{suffix}" if head else suffix


def _is_label(name: str) -> bool:
    return bool(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name))


@functools.lru_cache(maxsize=4096)  # pure, and hashing is most of a name's cost
def child_name(
    kind: str, *parts: str, max_len: int = DNS_LABEL_MAX, letter_first: bool = False
) -> str:
    """A DNS label of at most ``max_len``: the joined parts, cut, then a hash of kind + parts.

    ``letter_first`` makes it a DNS-1035 label too (what a Service name must be).
    """
    clean = _INVALID.sub("-", "-".join(parts).lower()).strip("-")
    if letter_first and not clean[:1].isalpha():
        clean = f"{LETTER_PREFIX}{clean}"
    return _with_suffix(clean, short_hash(kind, *parts), max_len)


def suffixed(base: str, suffix: str) -> str:
    """``<base>-<suffix>`` within 63 characters (``base`` hashed when it must shrink), starting
    with a letter, so it is a valid Service name too (DNS-1035)."""
    max_len = DNS_LABEL_MAX - len(suffix) - 1
    head = dns_label(base, max_len=max_len)
    if not head[:1].isalpha():
        head = dns_label(f"{LETTER_PREFIX}{base}", max_len=max_len)
    return f"{head}-{suffix}"
