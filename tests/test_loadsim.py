"""The load simulator the autoscaling e2e test plays (e2e/loadsim.py): its curve and queue."""

from __future__ import annotations

from e2e.loadsim import Curve, Row, Simulator, exposition, figures

RAMP = Curve(((0, 1.0), (10, 3.0), (20, 3.0)))


def test_a_curve_is_linear_between_its_points() -> None:
    assert RAMP(5) == 2.0


def test_a_curve_is_flat_before_its_first_point_and_after_its_last() -> None:
    assert (RAMP(-1), RAMP(99)) == (1.0, 3.0)


def test_load_past_capacity_queues() -> None:
    sim = Simulator(capacity=1.0)
    sim.step(rate=3.0, serving=1, dt=2.0)
    assert sim.backlog == 4.0


def test_the_queue_is_shared_by_the_serving_replicas() -> None:
    sim = Simulator(capacity=1.0, backlog=6.0)
    assert sim.waiting(3) == 2.0


def test_spare_capacity_drains_the_queue_but_never_below_empty() -> None:
    sim = Simulator(capacity=1.0, backlog=2.0)
    sim.step(rate=0.0, serving=3, dt=5.0)
    assert sim.backlog == 0.0


def test_with_no_replica_serving_everything_waits() -> None:
    sim = Simulator(capacity=1.0)
    sim.step(rate=2.0, serving=0, dt=3.0)
    assert (sim.backlog, sim.waiting(0)) == (6.0, 0.0)


def test_a_replica_at_full_throughput_has_a_full_cache() -> None:
    assert Simulator(capacity=2.0).kv_cache(rate=4.0, serving=2) == 1.0


def test_a_replica_at_half_throughput_has_half_a_cache() -> None:
    assert Simulator(capacity=2.0).kv_cache(rate=2.0, serving=2) == 0.5


def test_the_exposition_names_each_replica_as_the_composed_queries_select_it() -> None:
    text = exposition("team", "chat", ["chat-0", "chat-1"], Simulator(1.0, backlog=4.0), 1.0)
    series = (
        'vllm:num_requests_waiting{modelplane_ai_deployment="chat",'
        'modelplane_ai_deployment_namespace="team",modelplane_ai_replica="chat-1"} 2.000'
    )
    assert series in text.splitlines()


def rows(*desired: int, waiting: float = 0.0) -> list[Row]:
    return [Row(float(t), 1.0, d, d, waiting) for t, d in enumerate(desired)]


def test_oscillations_count_reversals_of_the_desired_count() -> None:
    assert figures(rows(1, 2, 2, 1, 2, 3, 3), target=4).oscillations == 2


def test_a_fixed_fleet_is_priced_at_the_runs_peak() -> None:
    assert figures(rows(1, 3, 1), target=4).peak_fleet_seconds == 6.0


def test_reaction_runs_from_the_queue_passing_the_target_to_a_larger_count() -> None:
    record = [Row(0, 1, 1, 1, 0), Row(1, 3, 1, 1, 5), Row(2, 3, 1, 1, 7), Row(3, 3, 2, 1, 8)]
    assert figures(record, target=4).reaction_seconds == 2.0


def test_a_run_that_never_passes_the_target_has_no_reaction() -> None:
    assert figures(rows(1, 1, 1), target=4).reaction_seconds is None
