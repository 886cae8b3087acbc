"""A release of Modelplane that moves the serving stack's default versions reaches the fleet in
waves, through the FunctionRunner over several reconciles.

The fleet starts as the previous release left it: cert-manager and Prometheus installed at
older defaults (composed as pins, then read back with the pins gone, as an upgraded function
sees them), every cluster StackReady on an older revision. Each reconcile, every cluster is
composed from what the one before published; provider-helm reports a changed Release one
reconcile late (still Ready at the version before), as it does until it has upgraded it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.compose.inferencecluster.composer import CLASSES, GATEWAYS, REPLICAS
from modelplane.compose.inferencecluster.waves import PREVIOUS_WAVE, revision
from modelplane.labels import STACK_WAVE
from modelplane.simulate import observe
from tests.compose.inferencecluster.support import H100, cluster, installed, resources
from tests.compose.through import Response, run

Obj = dict[str, Any]

OLD = {"certManager": "v1.20.0", "prometheus": "88.0.0"}
OLD_REVISION = "rprevious00"
CERT_MANAGER = "cert-manager"


def _labelled(name: str, wave: str | None, **spec: Any) -> Obj:
    ic = cluster(name, **spec)
    if wave is not None:
        ic["metadata"]["labels"] = {STACK_WAVE: wave}
    return ic


def _as_last_release(ic: Obj) -> tuple[Obj, dict[str, Obj]]:
    """``ic`` as the previous release left it, and what its providers report."""
    pins = {field: {"version": v} for field, v in OLD.items()}
    stack = {**copy.deepcopy(ic["spec"].get("servingStack") or {})}
    for field_, pin in pins.items():
        stack[field_] = {**pin, **stack.get(field_, {})}
    old = copy.deepcopy(ic)
    old["spec"]["servingStack"] = stack
    before = installed(old)
    observed = {k: observe(copy.deepcopy(o), 1) for k, o in resources(before).items()}
    status = copy.deepcopy(before.status)
    status["servingStack"]["revision"] = OLD_REVISION
    status["conditions"] = [
        {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
        for c in before.conditions
    ]
    return {**ic, "status": status}, observed


@dataclass
class Member:
    composite: Obj
    observed: dict[str, Obj]
    reported: dict[str, Obj]
    """What the providers report (status) per key: the state one reconcile before."""
    history: list[Response] = field(default_factory=list)


class Fleet:
    def __init__(self, *clusters: Obj) -> None:
        self.members: dict[str, Member] = {}
        for ic in clusters:
            composite, observed = _as_last_release(ic)
            self.members[ic["metadata"]["name"]] = Member(composite, observed, observed)
        self.unlisted: set[str] = set()
        """Requirements answered as not fetched yet this reconcile."""

    def reconcile(self) -> None:
        """Every cluster composed once, from what each published the reconcile before."""
        before = {n: copy.deepcopy(m.composite) for n, m in self.members.items()}
        for member in self.members.values():
            rsp = self._compose(member, before, asked=None)
            # Crossplane calls again once it has fetched what the function asked for.
            rsp = self._compose(member, before, asked=rsp)
            assert rsp.fatal is None, rsp.fatal
            member.history.append(rsp)
            status = {**rsp.status, "conditions": _conditions(rsp)}
            member.composite = {**member.composite, "status": status}
            # provider-helm reports the version it installed one reconcile after the change.
            reported = {k: observe(copy.deepcopy(o), 1) for k, o in rsp.resources.items()}
            member.observed = {
                k: {**o, "status": member.reported.get(k, reported[k]).get("status", {})}
                for k, o in reported.items()
            }
            member.reported = reported

    def _compose(self, member: Member, fleet: Mapping[str, Obj], asked: Response | None) -> Any:
        required: dict[str, list[Obj] | None] = {
            CLASSES: [H100],
            REPLICAS: [],
            GATEWAYS: [],
        }
        for name, (kind, labels) in (asked.by_labels if asked else {}).items():
            # Only the clusters of a wave are answered from the fleet; the rest as above.
            if name in self.unlisted or kind != "InferenceCluster":
                continue
            required[name] = [
                copy.deepcopy(ic)
                for ic in fleet.values()
                if labels.items() <= (ic["metadata"].get("labels") or {}).items()
            ]
        return run(member.composite, member.observed, required)

    def composes(self, name: str, key: str = CERT_MANAGER) -> str:
        rsp = self.members[name].history[-1]
        return str(rsp.resources[key]["spec"]["forProvider"]["chart"]["version"])

    def published(self, name: str) -> str:
        return str(self.members[name].composite["status"]["servingStack"].get("revision", ""))

    def done(self, name: str) -> bool:
        status = self.members[name].composite["status"]
        ready = {c["type"]: c["status"] for c in status["conditions"]}
        return status["servingStack"].get("revision") == revision() and (
            ready.get("StackReady") == "True"
        )

    def condition(self, name: str, type_: str = "StackUpToDate") -> tuple[str, str, str]:
        return self.members[name].history[-1].condition(type_)


def _conditions(rsp: Response) -> list[Obj]:
    return [
        {"type": t, "status": s, "reason": r, "message": m}
        for t, (s, r, m) in rsp.conditions.items()
    ]


NEW = "v1.21.1"


def _waves() -> Fleet:
    return Fleet(
        _labelled("canary", "0"),
        _labelled("east", "1"),
        _labelled("west", "1"),
        _labelled("north", "2"),
    )


def test_a_wave_takes_the_new_defaults_only_once_every_cluster_before_it_runs_them() -> None:
    fleet = _waves()
    waves = {"canary": 0, "east": 1, "west": 1, "north": 2}
    for _ in range(12):
        done_before = {n: fleet.done(n) for n in waves}
        fleet.reconcile()
        for name, wave in waves.items():
            if fleet.composes(name) != NEW or wave == 0:
                continue
            ahead = [n for n, w in waves.items() if w == wave - 1]
            assert all(done_before[n] for n in ahead), (name, done_before)
    assert all(fleet.done(n) for n in waves)
    assert [fleet.condition(n)[1] for n in waves] == ["UpToDate"] * 4


def test_the_waves_proceed_one_after_another_not_all_in_one_poll() -> None:
    fleet = _waves()
    fleet.reconcile()
    assert [fleet.composes(n) for n in ("canary", "east", "west", "north")] == [
        NEW,
        "v1.20.0",
        "v1.20.0",
        "v1.20.0",
    ]
    status, reason, message = fleet.condition("north")
    assert (status, reason) == ("False", "WaitingForWave")
    assert "keeping cert-manager v1.20.0 -> v1.21.1, prometheus 88.0.0 -> 88.5.3" in message
    assert "2 of 2 clusters of wave 1" in message


def test_a_cluster_publishes_the_new_revision_only_once_its_provider_reports_it_installed() -> None:
    fleet = Fleet(_labelled("canary", "0"))
    fleet.reconcile()  # composes the new versions; the provider still reports the old ones
    assert fleet.composes("canary") == NEW
    assert fleet.published("canary") == OLD_REVISION
    assert fleet.condition("canary")[:2] == ("False", "Upgrading")
    fleet.reconcile()  # the provider's report still lags the composed version by one reconcile
    assert fleet.condition("canary", "StackReady")[:2] == ("False", "Installing")
    assert "upgrading from v1.20.0 to v1.21.1" in fleet.condition("canary", "StackReady")[2]
    fleet.reconcile()
    assert fleet.published("canary") == revision()
    assert fleet.condition("canary")[:2] == ("True", "UpToDate")


def test_a_paused_cluster_keeps_its_versions_and_holds_every_later_wave() -> None:
    fleet = _waves()
    east = fleet.members["east"].composite
    east["spec"]["servingStack"]["rollout"] = {"paused": True}
    for _ in range(8):
        fleet.reconcile()
    assert fleet.done("canary") and fleet.done("west")
    assert fleet.composes("east") == "v1.20.0"
    assert fleet.composes("north") == "v1.20.0"
    assert fleet.condition("east")[1] == "Paused"
    assert fleet.published("east") == OLD_REVISION

    east["spec"]["servingStack"]["rollout"] = {"paused": False}
    for _ in range(8):
        fleet.reconcile()
    assert fleet.done("east") and fleet.done("north")


def test_a_previous_wave_not_read_yet_never_upgrades_nor_downgrades() -> None:
    fleet = _waves()
    for _ in range(4):
        fleet.reconcile()
    assert fleet.done("canary") and fleet.composes("east") == NEW
    fleet.unlisted = {PREVIOUS_WAVE}
    fleet.reconcile()
    assert fleet.composes("east") == NEW  # not taken back to what ran before
    assert fleet.composes("north") == "v1.20.0"  # nor upgraded on no evidence
    assert "reading the InferenceClusters labelled" in fleet.condition("north")[2]


def test_a_previous_wave_whose_status_is_not_written_never_upgrades_the_next() -> None:
    fleet = Fleet(_labelled("canary", "0"), _labelled("east", "1"))
    fleet.members["canary"].composite.pop("status")  # as listed before its first reconcile
    fleet.members["canary"].composite["spec"]["servingStack"]["rollout"] = {"paused": True}
    fleet.reconcile()
    assert fleet.composes("east") == "v1.20.0"
    assert fleet.condition("east")[1] == "WaitingForWave"


def test_an_empty_previous_wave_holds_the_next_and_says_waves_have_no_gaps() -> None:
    fleet = Fleet(_labelled("canary", "0"), _labelled("far", "3"))
    for _ in range(4):
        fleet.reconcile()
    assert fleet.done("canary")
    assert fleet.composes("far") == "v1.20.0"
    assert "no InferenceCluster labelled modelplane.ai/stack-wave=2" in fleet.condition("far")[2]


def test_a_pinned_component_is_not_rolled_by_the_waves() -> None:
    pinned = _labelled("pinned", "0", servingStack={"certManager": {"version": "v1.20.0"}})
    fleet = Fleet(pinned)
    for _ in range(4):
        fleet.reconcile()
    assert fleet.composes("pinned") == "v1.20.0"
    assert fleet.composes("pinned", "prometheus") == "88.5.3"
    assert fleet.done("pinned")


def test_a_cluster_without_a_wave_label_takes_the_defaults_at_once_and_gates_no_wave() -> None:
    fleet = Fleet(_labelled("plain", None), _labelled("east", "1"))
    fleet.reconcile()
    assert fleet.composes("plain") == NEW
    for _ in range(4):
        fleet.reconcile()
    assert fleet.done("plain")
    assert fleet.composes("east") == "v1.20.0"
    assert "no InferenceCluster labelled modelplane.ai/stack-wave=0" in fleet.condition("east")[2]


def test_a_wave_label_that_is_not_a_number_keeps_what_the_cluster_runs() -> None:
    fleet = Fleet(_labelled("odd", "first"))
    fleet.reconcile()
    assert fleet.composes("odd") == "v1.20.0"
    status, reason, message = fleet.condition("odd")
    assert (status, reason) == ("False", "InvalidWave")
    assert "label modelplane.ai/stack-wave: 'first' is not a wave number" in message


def test_a_fresh_cluster_installs_the_defaults_whatever_its_wave() -> None:
    fresh = _labelled("fresh", "4")
    rsp = run(fresh, {}, {CLASSES: [H100], REPLICAS: [], GATEWAYS: []})
    for _ in range(2):  # cert-manager is composed once the Gateway API CRD is served
        observed = {k: observe(copy.deepcopy(o), 1) for k, o in rsp.resources.items()}
        rsp = run(fresh, observed, {CLASSES: [H100], REPLICAS: [], GATEWAYS: []})
    assert rsp.resources[CERT_MANAGER]["spec"]["forProvider"]["chart"]["version"] == NEW
