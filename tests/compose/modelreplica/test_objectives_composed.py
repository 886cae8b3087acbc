"""The ModelReplica composer composes its pool's InferenceObjectives (one per priority value a
gateway may set) beside its routing, and never waits for its cluster to apply them: unapplied,
requests are served at priority 0 (docs/design/shared-front-door.md, "Priority as designed")."""

from __future__ import annotations

from modelplane.compose.modelreplica import objectives, routing
from modelplane.compose.shared.frontdoor import PRIORITY_VALUES
from tests.compose.modelreplica.routing_fixtures import objectiveless_picker

from .support import manifests, replica, run


def test_a_replica_composes_one_objective_per_priority_value() -> None:
    composed = manifests(run(replica()))
    assert sorted(composed[k]["spec"]["priority"] for k in objectives.KEYS) == list(PRIORITY_VALUES)


def test_the_objectives_name_the_pool_the_replica_composes() -> None:
    composed = manifests(run(replica()))
    pool = composed[routing.POOL_KEY]["metadata"]["name"]
    assert {composed[k]["spec"]["poolRef"]["name"] for k in objectives.KEYS} == {pool}


def test_the_objectives_live_in_the_replicas_namespace() -> None:
    composed = manifests(run(replica(namespace="team")))
    assert {composed[k]["metadata"]["namespace"] for k in objectives.KEYS} == {"team"}


def test_an_objective_is_ready_once_it_exists_whatever_its_cluster_says() -> None:
    first = run(replica())
    # Observed as created, with no status at all: a cluster that has not applied it.
    seen = {k: d.resource for k, d in first.resources.items()}
    again = run(replica(), observed=seen)
    assert {again.resources[k].ready for k in objectives.KEYS} == {"True"}


def test_an_objective_not_yet_observed_is_not_ready() -> None:
    assert {run(replica()).resources[k].ready for k in objectives.KEYS} == {"False"}


def test_a_picker_that_cannot_read_objectives_gets_none() -> None:
    serving = objectiveless_picker()
    result = run(replica(serving=serving))
    assert result.fatal is None, result.fatal
    assert not set(objectives.KEYS) & set(result.resources)
