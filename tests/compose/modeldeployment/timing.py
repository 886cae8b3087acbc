"""A ModelDeployment and its replicas on real timing, for rollout tests with adversarial timing.

The deployment and each replica are reconciled separately, as Crossplane does: the deployment
may be requeued on its own write several times before any replica reconciles, and a replica's
status may land a round after it was observed. What serves is what the clusters run, kept apart
from what any status says, so each test can judge the deployment after every step against the
truth:

- a replica whose stamp changed restarts when its own reconcile composes the new stamp; the
  status written then still says it serves (its old pods were ready when observed), and names
  the new revision not ready; it serves again on the replica reconcile after;
- ``broken(name, stamp)`` replicas never serve;
- a cluster deleted (``delete_cluster``) is gone from the list, answers nothing when asked for
  by name, and what ran on it serves no more;
- with ``restart_rounds``, a restarted replica serves nothing (and says so) for that many more
  replica reconciles: a kill-first restart at one copy;
- with ``service``, a ModelService selects every replica: its front route (one route Object,
  what the deployment lists) names the pool of each ModelEndpoint the deployment composes, as of
  the service's last reconcile (``S`` in ``play``); a replica is routed while the route applied
  on the cluster names its pool. With ``endpoint_lag``, a new endpoint's lane is added only on
  the service reconcile after the one that first saw it, as its own status comes first.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from modelplane.compose.modeldeployment.composer import CLASSES, CLUSTERS, REPLICAS
from modelplane.compose.modeldeployment.doomed import DELETION_ATTEMPT
from modelplane.compose.modeldeployment.drain import DRAIN_ROUTES, HOLDS, ROUTES
from modelplane.compose.shared.replicapool import replica_pool_name
from modelplane.compose.shared.routed import USAGE_API_VERSION, referenced_pools
from modelplane.labels import HOLDS_ROUTED
from tests.compose.through import Response, run
from tests.fleet.builders import H100, inference_cluster, reported, stamp_of, with_condition

Obj = dict[str, Any]
FLEET = [inference_cluster(n, {"h100": ("h100", 4)}, classes=[H100]) for n in ("a", "b", "c")]


@dataclass
class Run:
    """What a replica's cluster runs: the stamp its workloads carry, and whether it serves."""

    stamp: str
    up: bool
    down: int = 0
    """Replica reconciles it still serves nothing for (a restart in progress)."""


class World:
    def __init__(
        self,
        lag: int = 0,
        broken: Callable[[str, str], bool] = lambda name, stamp: False,
        restart_rounds: int = 0,
        service: bool = False,
        endpoint_lag: bool = False,
    ) -> None:
        self.restart_rounds = restart_rounds
        self.endpoint_lag = endpoint_lag
        """A new endpoint's lane is added a service reconcile after it is first seen (its own
        reconcile publishes the pool it routes to first); a gone one's is dropped at once."""
        self.seen: set[str] = set()
        """The pools of the endpoints the service saw on its last reconcile."""
        self.held: set[str] = set()
        """Replicas the service's Usages hold (``replayDeletion``): each whose pool its route
        named before or after its last reconcile."""
        self.lists_lag = False
        """The deployment's lists of route Objects and of Usages come back empty."""
        self.replayed: list[tuple[str, bool]] = []
        """Every replica a replayed delete removed, with whether it was draining then."""
        self.route: Obj | None = _route() if service else None
        self.not_ready: set[str] = set()
        """Clusters whose serving stack is down (``stack_down``): nothing there serves."""
        self.unreachable: set[str] = set()
        """Clusters whose gateway is down: nothing there is routed."""
        """The ModelService's front route Object: what it applies and what is applied."""
        self.replicas: dict[str, Obj] = {}
        """The ModelReplicas as the API server holds them: what the deployment last wrote,
        with the status their own reconciles wrote."""
        self.others: dict[str, Obj] = {}
        self.runs: dict[str, Run] = {}
        """What each replica's cluster runs, by replica name: the truth."""
        self.lag = lag
        """Replica reconciles between a status observed and the status landing."""
        self.landing: list[tuple[int, str, str, Obj]] = []
        self.broken = broken
        self.ticks = 0
        self.fleet = list(FLEET)
        self.last: Response | None = None
        self.judges: list[Callable[[World], None]] = []
        """Called after every step (a test's guarantees, judged against the truth)."""
        self.stepped = ""
        """The step just taken: "deployment" or "replicas"."""
        self.lowest: int | None = None
        """The fewest replicas serving after any step since ``settle``."""

    def deployment(self, md: Obj) -> Response:
        """One deployment reconcile: it reads the replicas as they are, and writes them."""
        observed = {**self.others, **self.replicas}
        required: dict[str, list[Obj] | None] = {
            CLUSTERS: self.fleet,
            CLASSES: [H100],
            REPLICAS: list(self.replicas.values()),
            ROUTES: [copy.deepcopy(self.route)] if self.route and not self.lists_lag else [],
            HOLDS: [] if self.lists_lag else [_usage(n) for n in sorted(self.held)],
        }
        rsp = run(md, observed, required)
        # What it asks for by name is fetched and it is called again, in the same reconcile.
        truth = [*self.fleet, *([self.route] if self.route else [])]
        while new := {n: ask for n, ask in rsp.by_name.items() if n not in required}:
            for name, (_, match, _) in new.items():
                required[name] = [copy.deepcopy(o) for o in truth if o["metadata"]["name"] == match]
            rsp = run(md, observed, required)
        assert rsp.fatal is None, rsp.fatal
        replicas: dict[str, Obj] = {}
        for key, obj in rsp.resources.items():
            if obj["kind"] != "ModelReplica":
                continue
            obj = copy.deepcopy(obj)
            was = self.replicas.get(key)
            if was is not None and "status" in was:
                obj["status"] = copy.deepcopy(was["status"])
            attempt = _attempt(was)
            if attempt is not None:
                # The webhook's annotation is its own field: the deployment's apply keeps it.
                obj["metadata"].setdefault("annotations", {})[DELETION_ATTEMPT] = attempt
            replicas[key] = obj
        gone = {o["metadata"]["name"] for o in self.replicas.values()} - {
            o["metadata"]["name"] for o in replicas.values()
        }
        if self._refused(gone):
            # A refused delete fails the whole reconcile: nothing else is applied.
            self._judge("deployment")
            return rsp
        for name in gone:
            self.runs.pop(name, None)
        self.replicas = replicas
        self.others = {k: o for k, o in rsp.resources.items() if o["kind"] != "ModelReplica"}
        self.last = rsp
        self._judge("deployment")
        return rsp

    def replica_reconciles(self) -> None:
        """Every replica reconciles: a new stamp restarts it, a restart done serves."""
        self.ticks += 1
        for key, obj in self.replicas.items():
            name, stamp = obj["metadata"]["name"], stamp_of(obj)
            run = self.runs.get(name)
            if obj["spec"]["clusterName"] not in {c["metadata"]["name"] for c in self.fleet}:
                # Its cluster is gone, and what ran there with it; its reconcile says so.
                self.runs[name] = Run(stamp, up=False)
                status = reported(obj, up=False)
            elif obj["spec"]["clusterName"] in self.not_ready:
                # Its stack is down: whatever it is stamped with, nothing there serves.
                self.runs[name] = Run(stamp, up=False)
                status = reported(obj, up=False)
            elif run is None or run.stamp != stamp:
                # Composed anew: what the cluster ran was ready when observed, and restarts now.
                was_up = run is not None and run.up
                self.runs[name] = Run(stamp, up=False, down=self.restart_rounds)
                status = reported(obj, up=False)
                status = with_condition(status, "ModelServing", "True" if was_up else "False")
            elif run.down:
                run.down -= 1
                status = reported(obj, up=False)
            else:
                run.up = not self.broken(name, stamp)
                status = reported(obj, up=run.up)
            self.landing.append((self.ticks + self.lag, key, name, status["status"]))
        for _, key, name, status in [x for x in self.landing if x[0] <= self.ticks]:
            replica = self.replicas.get(key)
            if replica is not None and replica["metadata"]["name"] == name:
                replica["status"] = status
        self.landing = [x for x in self.landing if x[0] > self.ticks]
        self._judge("replicas")

    def _refused(self, gone: set[str]) -> bool:
        """Crossplane deletes what the deployment left out, in turn; the Usage webhook refuses
        a held one and records the attempt on it (foreground, as Crossplane deletes)."""
        for name in sorted(gone):
            if name in self.held:
                [obj] = [o for o in self.replicas.values() if o["metadata"]["name"] == name]
                obj["metadata"].setdefault("annotations", {})[DELETION_ATTEMPT] = "Foreground"
                return True
        return False

    def service_reconcile(self) -> None:
        """The ModelService reconciles: its route names the pools of the endpoints it lists
        now, and the cluster applies it at once."""
        assert self.route is not None
        listed = {
            o["spec"]["inferencePool"] for o in self.others.values() if o["kind"] == "ModelEndpoint"
        }
        pools = sorted(listed & self.seen if self.endpoint_lag else listed)
        self.seen = listed
        manifest = {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "spec": {
                "rules": [{"backendRefs": [{"kind": "InferencePool", "name": p} for p in pools]}]
            },
        }
        before = _pools(self.route)
        if self.route["spec"]["forProvider"]["manifest"] != manifest:
            self.route["metadata"]["generation"] += 1
            self.route["spec"]["forProvider"]["manifest"] = manifest
        self.route["status"] = {"atProvider": {"manifest": copy.deepcopy(manifest)}}
        self._release(before | _pools(self.route))
        self._judge("service")

    def _release(self, named: set[str]) -> None:
        """The service holds each replica whose pool its route named before or after this
        reconcile; a Usage released replays a delete recorded on its replica."""
        now = {
            o["metadata"]["name"]
            for o in self.replicas.values()
            if replica_pool_name(o["metadata"]["name"]) in named
        }
        for key, obj in list(self.replicas.items()):
            name = obj["metadata"]["name"]
            if name in self.held - now and _attempt(obj) is not None:
                draining = DRAIN_ROUTES in (obj["metadata"].get("annotations") or {})
                self.replayed.append((name, draining))
                del self.replicas[key]
                self.runs.pop(name, None)
        self.held = now

    def _judge(self, step: str) -> None:
        self.stepped = step
        serving = self.serving_count()
        self.lowest = serving if self.lowest is None else min(self.lowest, serving)
        for judge in self.judges:
            judge(self)

    def stack_down(self, name: str, down: bool = True) -> None:
        """The cluster's serving stack goes down (StackReady False; its workloads gone), or
        comes back."""
        status, reason = ("False", "Unavailable") if down else ("True", "Available")
        self.fleet = [
            with_condition(c, "StackReady", status, reason) if c["metadata"]["name"] == name else c
            for c in self.fleet
        ]
        if down:
            self.not_ready.add(name)
            for o in self.replicas.values():
                if o["spec"]["clusterName"] == name:
                    self.runs[o["metadata"]["name"]].up = False
        else:
            self.not_ready.discard(name)
        self._judge("stack down" if down else "stack up")

    def delete_cluster(self, name: str) -> None:
        self.fleet = [c for c in self.fleet if c["metadata"]["name"] != name]
        for o in self.replicas.values():
            if o["spec"]["clusterName"] == name:
                self.runs[o["metadata"]["name"]].up = False
        self._judge("cluster deleted")

    def play(self, md: Obj, pattern: str, rounds: int) -> None:
        """``pattern`` per round: ``D`` a deployment reconcile, ``R`` every replica's."""
        for _ in range(rounds):
            for step in pattern:
                if step == "D":
                    self.deployment(md)
                elif step == "S":
                    self.service_reconcile()
                else:
                    self.replica_reconciles()

    def settle(self, md: Obj) -> None:
        self.play(md, "DRS" if self.route else "DR", 4 + self.restart_rounds)
        assert self.rolled_out()
        self.lowest = None

    # The truth.

    def serving_count(self) -> int:
        """Replicas whose cluster serves them, whatever any status says."""
        return sum(
            1
            for o in self.replicas.values()
            if (run := self.runs.get(o["metadata"]["name"])) is not None and run.up
        )

    def routed(self, name: str) -> bool:
        """Whether the route applied on the cluster names the replica's pool (every replica
        is, without a ModelService)."""
        [replica] = [o for o in self.replicas.values() if o["metadata"]["name"] == name]
        if replica["spec"]["clusterName"] in self.unreachable:
            return False
        if self.route is None:
            return True
        applied = self.route["status"]["atProvider"]["manifest"]
        return replica_pool_name(name) in referenced_pools(
            [{"spec": {"forProvider": {"manifest": applied}}}]
        )

    def serving_and_routed(self) -> int:
        return sum(
            1
            for o in self.replicas.values()
            if (run := self.runs.get(o["metadata"]["name"])) is not None
            and run.up
            and self.routed(o["metadata"]["name"])
        )

    def rolled_out(self) -> bool:
        """Every replica runs the stamp it carries, and serves: all but those draining (a
        surge's old replica, one scaled in), which leave."""
        return all(
            (run := self.runs.get(o["metadata"]["name"])) is not None
            and run.up
            and self.routed(o["metadata"]["name"])
            and run.stamp == stamp_of(o)
            for o in self.replicas.values()
            if DRAIN_ROUTES not in (o["metadata"].get("annotations") or {})
        )

    def stamps(self) -> dict[int, str]:
        return {
            int(o["metadata"]["labels"]["modelplane.ai/replica-index"]): stamp_of(o)
            for o in self.replicas.values()
        }


def _attempt(replica: Obj | None) -> str | None:
    annotations = ((replica or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(DELETION_ATTEMPT)
    return None if value is None else str(value)


def _pools(route: Obj) -> set[str]:
    """The pools a route Object names, in what it applies or what is applied."""
    return referenced_pools([route])


def _usage(replica: str) -> Obj:
    """The ModelService's Usage holding ``replica``."""
    return {
        "apiVersion": USAGE_API_VERSION,
        "kind": "Usage",
        "metadata": {
            "name": f"chat-holds-{replica}",
            "namespace": "ml",
            "labels": {HOLDS_ROUTED: "true"},
        },
        "spec": {
            "of": {
                "apiVersion": "modelplane.ai/v1alpha1",
                "kind": "ModelReplica",
                "resourceRef": {"name": replica},
            },
            "reason": "ModelService chat routes to its InferencePool",
            "replayDeletion": True,
        },
    }


def _route() -> Obj:
    """A ModelService's front route Object, naming no pool yet."""
    return {
        "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
        "kind": "Object",
        "metadata": {
            "name": "chat-front-gw",
            "namespace": "ml",
            "generation": 1,
            "labels": {"modelplane.ai/routes-pools": "true"},
        },
        "spec": {"forProvider": {"manifest": {}}},
        "status": {"atProvider": {"manifest": {}}},
    }
