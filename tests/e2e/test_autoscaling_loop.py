"""The autoscaling loop closed on the real control plane (docs/design/autoscaling.md, "Proof").

Load from a curve queues at a simulated deployment (e2e/loadsim.py: the engines' own metric
names, one series per Ready replica); Prometheus scrapes it; KEDA's operator reads the query
Modelplane composed into the ScaledObject, and its adapter serves it to kube-controller-manager's
HPA as an external metric; the HPA writes the ModelDeployment's scale subresource; Crossplane runs
the function, which places replicas on the fleet; the replicas become Ready and serve the queue.
Only the engines are simulated. The run's record (one row a second) is written to the run
directory as ``autoscaling-<curve>.csv``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from e2e import autoscaler
from e2e.environment import Environment
from e2e.kubernetes import condition_true
from e2e.loadsim import Curve, Row, Run, Simulator, figures
from modelplane.labels import DEPLOYMENT
from tests.e2e.conftest import (
    ROOT,
    add_fleet,
    deployment_ready,
    documents,
    eventually,
    guide_cluster,
    guide_model,
    namespace,
    retire,
)

pytestmark = pytest.mark.e2e

CLUSTER = "autoscaling-loop"
NAMESPACE = "autoscaling-loop"
NAME = "loop"
MAX = 3
WAITING_TARGET = 4
CAPACITY = 1.0
"""Requests per second one replica serves."""
SPIKE = 2.5


QUEUE = {"waitingRequestsPerReplica": WAITING_TARGET}
FAST_DOWN = {
    "scaleUp": {"stabilizationWindowSeconds": 0},
    "scaleDown": {"stabilizationWindowSeconds": 15},
}


@dataclass(frozen=True)
class Played:
    """A curve, the windows (seconds) its tests judge (a trickle one replica serves and a spike
    that needs every replica), and the deployment's autoscaling targets and behavior."""

    curve: Curve
    trickle: tuple[float, float]
    spike: tuple[float, float]
    targets: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(QUEUE))
    behavior: dict[str, Any] = dataclasses.field(default_factory=lambda: dict(FAST_DOWN))


# fmt: off
DAY = (
    (0, 0.5), (60, 0.5), (300, 1.6), (420, 1.6), (425, 2.8), (540, 2.8),
    (545, 1.6), (660, 1.6), (840, 0.3), (850, 0.0), (960, 0.0),
)
# fmt: on
CURVES = {
    # CI's: a trickle, a spike, then silence.
    "short": Played(
        Curve(((0, 0.5), (15, 0.5), (20, SPIKE), (140, SPIKE), (141, 0.0), (200, 0.0))),
        trickle=(0, 15),
        spike=(20, 141),
    ),
    # The page's (docs/design/autoscaling.md): a compressed day. Night, a morning ramp to two
    # replicas' worth, a spike past three, the afternoon, an evening ramp down, silence.
    "day": Played(
        Curve(DAY),
        trickle=(0, 60),
        spike=(425, 545),
    ),
    # The same day, with what the page recommends: the queue and KV-cache use together (the
    # queue alone reads zero whenever the replicas keep up, so it asks for the minimum at any
    # steady load), and a minute's scale-down window.
    "day-kv": Played(
        Curve(DAY),
        trickle=(0, 60),
        spike=(425, 545),
        targets={**QUEUE, "kvCacheUtilization": 80},
        behavior={**FAST_DOWN, "scaleDown": {"stabilizationWindowSeconds": 60}},
    ),
}
CURVE = os.environ.get("MODELPLANE_E2E_CURVE", "short")
PLAYED = CURVES[CURVE]


def deployment() -> dict[str, Any]:
    model = guide_model(NAMESPACE, CLUSTER, NAME, replicas=1)
    model["spec"]["autoscaling"] = {
        "minReplicas": 1,
        "maxReplicas": MAX,
        "targets": PLAYED.targets,
        "behavior": PLAYED.behavior,
    }
    return model


def observe(env: Environment) -> tuple[int, list[str]]:
    """The deployment's spec.replicas and its Ready replicas' names."""
    md = env.control.get("modeldeployment", NAME, "-n", NAMESPACE)
    replicas = env.control.get("modelreplicas", "-n", NAMESPACE, "-l", f"{DEPLOYMENT}={NAME}")
    ready = [r["metadata"]["name"] for r in replicas["items"] if condition_true(r, "Ready")]
    return int(md["spec"]["replicas"]), sorted(ready)


@pytest.fixture(scope="module")
def played(e2e: Environment) -> Iterator[list[Row]]:
    run = Run(NAMESPACE, NAME, PLAYED.curve, Simulator(CAPACITY), lambda: observe(e2e))
    port = run.serve()
    autoscaler.start_stack(e2e.control, [f"127.0.0.1:{port}"])
    try:
        add_fleet(
            e2e,
            [
                *documents(ROOT / "docs/getting-started/classes.yaml"),
                guide_cluster(CLUSTER, nodes=MAX),
            ],
        )
        namespace(e2e, NAMESPACE)
        e2e.control.apply([deployment()])
        deployment_ready(e2e, NAMESPACE, NAME)
        player = threading.Thread(target=run.run, daemon=True)
        player.start()
        player.join(PLAYED.curve.seconds + 120)
        record(e2e, run.rows)
        yield run.rows
    finally:
        run.stop()
        retire(e2e, {NAMESPACE}, {CLUSTER})
        autoscaler.stop_stack(e2e.control)


def record(env: Environment, rows: list[Row]) -> None:
    """The run's rows (CSV) and figures (JSON) in the run directory, the figures printed."""
    Run.write_rows(rows, env.run / f"autoscaling-{CURVE}.csv")
    said = figures(rows, WAITING_TARGET)
    path = env.run / f"autoscaling-{CURVE}.json"
    path.write_text(json.dumps(dataclasses.asdict(said), indent=2) + "\n")
    print(f"\nautoscaling {CURVE}: {said}")


def during(rows: list[Row], start: float, end: float) -> list[Row]:
    return [r for r in rows if start <= r.t < end]


def test_the_trickle_keeps_one_replica(played: list[Row]) -> None:
    assert {r.desired for r in during(played, *PLAYED.trickle)} == {1}


def test_the_spike_scales_the_deployment_to_its_maximum(played: list[Row]) -> None:
    spike = during(played, *PLAYED.spike)
    assert max(r.desired for r in spike) == MAX
    assert max(r.serving for r in spike) == MAX


def test_the_autoscaler_never_asks_past_the_maximum(played: list[Row]) -> None:
    assert max(r.desired for r in played) <= MAX


def test_the_replicas_serve_the_backlog_away(played: list[Row]) -> None:
    assert played[-1].waiting == 0


def test_silence_scales_the_deployment_back_to_its_minimum(
    e2e: Environment, played: list[Row]
) -> None:
    eventually(lambda: _count(e2e, 1), timeout=180, interval=2)


def _count(env: Environment, count: int) -> None:
    desired, ready = observe(env)
    assert (desired, len(ready)) == (count, count), (desired, ready)
