"""SGLang's metrics, which the picker and the engines' PodMonitor read, on every SGLang engine.

SGLang serves ``/metrics`` only when started with ``--enable-metrics`` (off by default), yet the
endpoint picker scores a pod labelled ``llm-d.ai/engine-type: sglang`` on SGLang's queue and
KV-cache gauges, and the serving stack's PodMonitor scrapes every serving pod. So Modelplane
adds the flag to an engine container that launches SGLang's server (``sglang.launch_server``)
without it: right after the launcher, where it reads the same whether the command line is a list
of words or a shell script (SGLang's parser does not care where a flag stands). A command line
that never names the launcher (a wrapper script in the image, another entry point) is left as
written: Modelplane cannot tell where a flag would go.
"""

from __future__ import annotations

import re
from typing import Any

from modelplane.kube.objects import Obj

LAUNCHER = "sglang.launch_server"
METRICS_FLAG = "--enable-metrics"
# The launcher as a word of a shell script: not part of a longer name (sglang_router's own
# launcher, a path), followed by a space or the end.
_IN_SCRIPT = re.compile(r"(?<![\w./-])sglang\.launch_server(?=\s|$)")
_HAS_FLAG = re.compile(r"(?<![\w-])--enable-metrics(?![\w-])")


def with_metrics(container: Obj) -> Obj:
    """The container, with ``--enable-metrics`` after each launch of SGLang's server in its
    command or args; unchanged when it passes the flag already or never launches it."""
    fields = {f: list(container.get(f) or ()) for f in ("command", "args")}
    if any(_HAS_FLAG.search(str(w)) for words in fields.values() for w in words):
        return container
    flagged = {f: _flagged(words) for f, words in fields.items() if words}
    changed = {f: words for f, words in flagged.items() if words != fields[f]}
    return {**container, **changed} if changed else container


def _flagged(words: list[Any]) -> list[Any]:
    out: list[Any] = []
    for word in words:
        if word == LAUNCHER:
            out += [word, METRICS_FLAG]
        elif isinstance(word, str):
            out.append(_IN_SCRIPT.sub(f"{LAUNCHER} {METRICS_FLAG}", word))
        else:
            out.append(word)
    return out
