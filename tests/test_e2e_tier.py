"""The e2e tier as CI runs it (e2e/tier.py): every module in exactly one of two shards, each
shard in a network namespace of its own where the machine can make one."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from e2e import tier

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests/e2e").glob("test_*.py"))


def collected(shard: tier.Shard) -> set[str]:
    """The e2e modules pytest collects for a shard's selection."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "e2e", "--collect-only", "-q", *shard.selection],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}


def test_every_e2e_module_runs_in_exactly_one_shard() -> None:
    first, second = (collected(shard) for shard in tier.shards())
    assert first | second == set(MODULES)
    assert first & second == set()


def test_the_first_shards_modules_exist() -> None:
    assert set(tier.FIRST) <= set(MODULES)


def test_ci_runs_the_tier_through_its_shards() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "\nuv run python -m e2e tier\n" in script
    assert "\nuv run pytest -m e2e\n" not in script


def test_without_a_namespace_the_shards_run_in_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tier, "NAMESPACED", (("false",),))
    assert tier.namespace_prefix() is None


def test_a_shards_namespace_has_its_own_loopback_ports() -> None:
    prefix = tier.namespace_prefix()
    if prefix is None:
        pytest.skip("this machine cannot make a network namespace")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        bind = f"import socket; socket.socket().bind(('127.0.0.1', {port}))"
        inside = subprocess.run([*prefix, "python3", "-c", bind], capture_output=True, text=True)
        assert inside.returncode == 0, inside.stderr
        outside = subprocess.run(["python3", "-c", bind], capture_output=True, text=True)
        assert "Address already in use" in outside.stderr


def shard_process(on_interrupt: str) -> subprocess.Popen[str]:
    """A stand-in shard: Python told what to do on SIGINT, then waiting for it."""
    code = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGINT, {on_interrupt})\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_an_interrupted_tier_lets_each_shard_tear_down_on_sigint() -> None:
    tearing_down = shard_process("lambda *_: sys.exit(3)")
    tier._interrupt([tearing_down])
    assert tearing_down.returncode == 3


def test_a_shard_that_ignores_the_interrupt_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tier, "STOP_SECONDS", 1)
    stubborn = shard_process("signal.SIG_IGN")
    tier._interrupt([stubborn])
    assert stubborn.returncode == -9


@pytest.mark.parametrize(
    ("codes", "tier_code"),
    [
        ({"examples": 0, "fleet": 0}, 0),
        ({"examples": 0, "fleet": 1}, 1),
        ({"examples": 2, "fleet": 1}, 2),
        # -k selecting tests of one shard only: the other collects nothing.
        ({"examples": tier.NO_TESTS, "fleet": 0}, 0),
        ({"examples": tier.NO_TESTS, "fleet": 1}, 1),
        ({"examples": tier.NO_TESTS, "fleet": tier.NO_TESTS}, tier.NO_TESTS),
    ],
)
def test_the_tier_fails_as_its_first_failing_shard(codes: dict[str, int], tier_code: int) -> None:
    assert tier.exit_code(codes) == tier_code
