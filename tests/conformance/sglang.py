"""What SGLang's server makes of its command line, as a test helper.

Read from github.com/sgl-project/sglang at tag v0.5.5 (the replica-gang-standard example's
image; the same in v0.5.2, the fleet-gang example's), python/sglang/srt/server_args.py:
``ServerArgs.add_cli_args`` declares ``--tp-size`` (no other option starts with ``--tp``, so
argparse's default abbreviations read ``--tp`` as it), ``--nnodes`` (default 1),
``--node-rank`` (default 0), ``--dist-init-addr`` (the head node's ``host:port``, default
none) and ``--enable-metrics`` (store_true, default False); python/sglang/launch_server.py
hands every word after the module to that parser. Options this helper does not declare are
left unparsed, as SGLang would parse them without changing these.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence

LAUNCHER = "sglang.launch_server"
TAG = "v0.5.5"
_SHELL_OPERATORS = {"&&", "||", ";", "|", "&"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=LAUNCHER, add_help=False)
    parser.add_argument("--tp-size", type=int, default=1)
    parser.add_argument("--nnodes", type=int, default=1)
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--dist-init-addr", default=None)
    parser.add_argument("--enable-metrics", action="store_true")
    return parser


def server_args(words: Sequence[str]) -> argparse.Namespace | None:
    """The server's arguments from a container's expanded command line (a list of words, or a
    shell's ``-c`` script), or None when it never launches SGLang's server."""
    argv = _launched(list(words))
    if argv is None:
        for word in words:
            if LAUNCHER in word and word != LAUNCHER:
                argv = _launched(shlex.split(word))
                break
    if argv is None:
        return None
    return _parser().parse_known_args(argv)[0]


def _launched(words: list[str]) -> list[str] | None:
    if LAUNCHER not in words:
        return None
    rest = words[words.index(LAUNCHER) + 1 :]
    end = next((i for i, w in enumerate(rest) if w in _SHELL_OPERATORS), len(rest))
    return rest[:end]
