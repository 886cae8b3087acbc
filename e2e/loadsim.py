"""A load simulator for the autoscaling loop: no GPU, no engine, only the numbers an engine's
/metrics would show under a load curve (docs/design/autoscaling.md, "Proof").

The model is a fluid queue. Requests arrive at ``curve(t)`` per second; every serving replica
completes ``capacity`` per second while it has work; what is not served waits, shared evenly by
the serving replicas (the endpoint picker balances them). A replica serves once its
ModelReplica on the control plane is Ready: the placement, the composed workload and the
readiness of the real control plane are the cold start. Each serving replica is exported as one
engine would be once the stack's PodMonitor has copied its pod labels (compose/modeldeployment/
autoscaling.py ``selector``): vLLM's ``vllm:num_requests_waiting`` and ``vllm:kv_cache_usage_perc``
labelled with the deployment, its namespace and the replica.

``Simulator.step`` is pure (time in, state out); ``Run`` is the loop that reads the replicas from
the control plane, serves the exposition on loopback and records one row per tick.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from e2e.exposition import serve as serve_text
from modelplane.compose.modeldeployment.autoscaling import REPLICA_SERIES, prometheus_label
from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE


@dataclass(frozen=True)
class Curve:
    """Load in requests per second, linear between ``(seconds, rate)`` points and flat after."""

    points: tuple[tuple[float, float], ...]

    def __call__(self, t: float) -> float:
        times = [p[0] for p in self.points]
        i = bisect.bisect_right(times, t)
        if i == 0:
            return self.points[0][1]
        if i == len(self.points):
            return self.points[-1][1]
        (t0, r0), (t1, r1) = self.points[i - 1], self.points[i]
        return r0 + (r1 - r0) * (t - t0) / (t1 - t0)

    @property
    def seconds(self) -> float:
        return self.points[-1][0]


@dataclass
class Simulator:
    """The queue of one deployment: ``capacity`` requests per second per serving replica."""

    capacity: float
    backlog: float = 0.0

    def step(self, rate: float, serving: int, dt: float) -> None:
        served = serving * self.capacity * dt
        self.backlog = max(0.0, self.backlog + rate * dt - served)

    def waiting(self, serving: int) -> float:
        """Waiting requests per serving replica."""
        return self.backlog / serving if serving else 0.0

    def kv_cache(self, rate: float, serving: int) -> float:
        """Each replica's KV-cache use: the share of its capacity its part of the load takes (a
        replica at full throughput has a full cache), full while requests wait."""
        if not serving:
            return 0.0
        if self.backlog > 0:
            return 1.0
        return min(1.0, rate / serving / self.capacity)


def exposition(
    namespace: str, deployment: str, replicas: Sequence[str], sim: Simulator, rate: float
) -> str:
    """The engines' series in Prometheus's text format, one per serving replica."""
    lines = [
        "# TYPE vllm:num_requests_waiting gauge",
        "# TYPE vllm:kv_cache_usage_perc gauge",
    ]
    waiting, kv = sim.waiting(len(replicas)), sim.kv_cache(rate, len(replicas))
    for replica in replicas:
        labels = (
            f'{prometheus_label(DEPLOYMENT)}="{deployment}",'
            f'{prometheus_label(DEPLOYMENT_NAMESPACE)}="{namespace}",'
            f'{REPLICA_SERIES}="{replica}"'
        )
        lines.append(f"vllm:num_requests_waiting{{{labels}}} {waiting:.3f}")
        lines.append(f"vllm:kv_cache_usage_perc{{{labels}}} {kv:.3f}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Row:
    t: float
    rate: float
    desired: int
    serving: int
    waiting: float


@dataclass
class Run:
    """The loop: every ``tick`` seconds, read the deployment's desired and serving replicas,
    advance the queue and publish the exposition; ``rows`` is the record."""

    namespace: str
    deployment: str
    curve: Curve
    sim: Simulator
    observe: Callable[[], tuple[int, list[str]]]
    """Returns (spec.replicas, the names of the Ready replicas)."""
    tick: float = 1.0
    rows: list[Row] = field(default_factory=list)
    _text: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)

    def serve(self) -> int:
        """Starts the exposition server on a loopback port, returned."""
        server = serve_text(lambda: self._text)
        self._server = server
        return int(server.server_address[1])

    def run(self) -> None:
        """Plays the curve to its end (or until ``stop``), one row per tick."""
        started = last = time.monotonic()
        while not self._stop.is_set():
            now = time.monotonic()
            t = now - started
            if t > self.curve.seconds:
                break
            desired, serving = self.observe()
            rate = self.curve(t)
            self.sim.step(rate, len(serving), now - last)
            last = now
            self._text = exposition(self.namespace, self.deployment, serving, self.sim, rate)
            self.rows.append(Row(t, rate, desired, len(serving), self.sim.waiting(len(serving))))
            self._stop.wait(self.tick)

    def stop(self) -> None:
        self._stop.set()
        if hasattr(self, "_server"):
            self._server.shutdown()

    @staticmethod
    def write_rows(rows: Sequence[Row], path: Path) -> None:
        """The record as CSV, the input of tools/autoscaling_plot.py."""
        lines = ["t,rate,desired,serving,waiting_per_replica"]
        lines += [f"{r.t:.1f},{r.rate:.2f},{r.desired},{r.serving},{r.waiting:.2f}" for r in rows]
        path.write_text("\n".join(lines) + "\n")


@dataclass(frozen=True)
class Figures:
    """What a run says about the autoscaler (docs/design/autoscaling.md, "Proof")."""

    reaction_seconds: float | None
    """From the first second the queue passes the target to the first larger desired count."""
    violation_seconds: float
    """Seconds during which a replica's queue was past the target."""
    oscillations: int
    """Reversals of the desired count (up then down, or down then up)."""
    replica_seconds: float
    peak_fleet_seconds: float
    """What a fixed fleet sized for the run's peak would have cost, in replica-seconds."""


def figures(rows: Sequence[Row], target: float) -> Figures:
    ticks = [b.t - a.t for a, b in itertools.pairwise(rows)]
    over = [r for r in rows if r.waiting > target]
    reaction = None
    if over:
        later = [r.t for r in rows if r.t >= over[0].t and r.desired > over[0].desired]
        reaction = later[0] - over[0].t if later else None
    return Figures(
        reaction_seconds=reaction,
        violation_seconds=sum(dt for r, dt in zip(rows, ticks, strict=False) if r.waiting > target),
        oscillations=_reversals([r.desired for r in rows]),
        replica_seconds=sum(r.serving * dt for r, dt in zip(rows, ticks, strict=False)),
        peak_fleet_seconds=max((r.desired for r in rows), default=0) * sum(ticks),
    )


def _reversals(counts: Sequence[int]) -> int:
    steps = [b - a for a, b in itertools.pairwise(counts) if b != a]
    return sum(1 for a, b in itertools.pairwise(steps) if (a > 0) != (b > 0))
