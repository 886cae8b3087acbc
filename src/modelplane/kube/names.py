"""Generated Kubernetes names that fit, stay stable, and never collide by truncation."""

from __future__ import annotations

import functools
import hashlib
import re

DNS_LABEL_MAX = 63
_HASH_LEN = 8
_INVALID = re.compile(r"[^a-z0-9-]+")


def short_hash(*parts: str, length: int = _HASH_LEN) -> str:
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()
    return digest[:length]


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
    suffix = short_hash(*parts)
    head = clean[: max_len - len(suffix) - 1].rstrip("-")
    return f"{head}-{suffix}" if head else suffix


def _is_label(name: str) -> bool:
    return bool(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name))
