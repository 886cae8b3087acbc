"""Whether a gang's engines are told where their leader is and which node each one is.

Modelplane gives every pod of a gang ``MODELPLANE_LEADER_ADDRESS`` and ``MODELPLANE_RANK``
(docs/design/workloads.md, "Gang environment"), but an engine learns them only from its
command line. SGLang, for one, defaults ``--node-rank`` to 0 and, without ``--dist-init-addr``,
meets its peers on 127.0.0.1: a gang whose command lines pass neither never forms, each pod
waiting alone as node 0. That is a warning, not a refusal: a script in the image may read the
variables itself.

Per member, on its engine container's command and args (a member without a template runs its
partner's): a worker must reference the leader's address, which every multi-node engine dials
(Ray's ``--address`` as much as SGLang's ``--dist-init-addr``); a member that passes ``--nnodes``
(SGLang's flag for a multi-node engine) must reference its rank and the leader's address both.
A reference is ``$(NAME)`` (the kubelet expands it), ``$NAME`` or ``${NAME}`` (a shell does), to
Modelplane's variable, to LeaderWorkerSet's own (``LWS_LEADER_ADDRESS``, ``LWS_WORKER_INDEX``:
those exist on the Standard stack only) or to a variable of the container's env defined from one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

from modelplane.compose.modelreplica.labelsets import role_of
from modelplane.compose.modelreplica.pods import engine_container, member_spec
from modelplane.compose.modelreplica.workloads import LEADER_ADDRESS_ENV, RANK_ENV
from modelplane.kube.objects import Obj

REASON = "GangNotWired"
_ADDRESS = (LEADER_ADDRESS_ENV, "LWS_LEADER_ADDRESS")
_RANK = (RANK_ENV, "LWS_WORKER_INDEX")
_NNODES = re.compile(r"(?<![\w-])--nnodes(?![\w-])")
_EXAMPLE = f"--dist-init-addr=$({LEADER_ADDRESS_ENV}):5000 --node-rank=$({RANK_ENV})"


def gang_warnings(engines: Iterable[Obj], at: str = "spec", stack: str | None = None) -> list[str]:
    """One ``path: message`` per gang member whose engine is never told what it must be told.

    ``stack`` is the cluster's, when known: LeaderWorkerSet's variables count except on Dynamo.
    """
    out: list[str] = []
    for e, engine in enumerate(engines):
        roles = {role_of(m): (j, m) for j, m in enumerate(engine.get("members") or ())}
        if "Leader" not in roles or "Worker" not in roles:
            continue
        for role, partner in (("Leader", "Worker"), ("Worker", "Leader")):
            j, member = roles[role]
            missing = _missing(role, member_spec(member, roles[partner][1]), stack)
            if missing:
                out.append(f"{at}.engines[{e}].members[{j}]: {_message(missing)}")
    return out


def _missing(role: str, spec: Obj | None, stack: str | None) -> list[str]:
    """Modelplane's variables the member's engine must reference and does not."""
    engine = engine_container(spec)
    if engine is None:
        return []
    words = [str(w) for f in ("command", "args") for w in engine.get(f) or ()]
    env = list(engine.get("env") or ())
    lws = stack != "Dynamo"
    return [
        names[0]
        for names in _needed(role, words)
        if not _references(words, _aliases(names if lws else names[:1], env))
    ]


def _needed(role: str, words: list[str]) -> list[tuple[str, str]]:
    """The variables (each with LeaderWorkerSet's own for it) the member's engine must be told:
    the leader's address on a worker or a multi-node engine, the rank on a multi-node one."""
    multi_node = any(_NNODES.search(w) for w in words)
    needed = []
    if role == "Worker" or multi_node:
        needed.append(_ADDRESS)
    if multi_node:
        needed.append(_RANK)
    return needed


def _aliases(names: Iterable[str], env: list[Any]) -> set[str]:
    """``names``, and each env variable whose value is defined from one of them (in order, as
    the kubelet expands them)."""
    known = set(names)
    for entry in env:
        if isinstance(entry, Mapping) and _references([str(entry.get("value") or "")], known):
            known.add(str(entry.get("name")))
    return known


def _references(words: Iterable[str], names: set[str]) -> bool:
    return any(_reference(frozenset(names)).search(w) for w in words)


@functools.lru_cache(maxsize=64)
def _reference(names: frozenset[str]) -> re.Pattern[str]:
    """``$(NAME)``, ``${NAME}`` or ``$NAME`` for any of ``names``."""
    any_of = "|".join(re.escape(n) for n in sorted(names))
    return re.compile(rf"\$(?:\((?:{any_of})\)|\{{(?:{any_of})\}}|(?:{any_of})\b)")


_CONSEQUENCES = {
    LEADER_ADDRESS_ENV: "its pods cannot reach the gang's leader",
    RANK_ENV: "every pod starts as node rank 0",
}


def _message(missing: list[str]) -> str:
    refs = " or ".join(f"$({name})" for name in missing)
    why = ", and ".join(_CONSEQUENCES[name] for name in missing)
    return (
        f"the engine container's command and args never reference {refs}, so the gang never "
        f"forms ({why}): pass them to the engine, e.g. SGLang's {_EXAMPLE}"
    )
