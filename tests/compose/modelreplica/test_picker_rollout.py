"""A picker rollout, played through the Deployment controller's rolling-update rules.

The model follows kube-controller-manager's ``pkg/controller/deployment/rolling.go``: the new
ReplicaSet grows while the total stays within ``replicas + maxSurge``; old pods go, unready ones
first, only while ``replicas - maxUnavailable`` pods stay available. A created pod is ready one
step later, if the picker lets it be ready.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .test_picker import objects

Obj = dict


@dataclass
class Pod:
    new: bool
    ready: bool = False


@dataclass
class Rollout:
    replicas: int
    max_surge: int
    max_unavailable: int
    # Whether a pod may turn ready, given every pod there is (leader election: only one).
    may_ready: Callable[[list[Pod]], bool]
    pods: list[Pod] = field(default_factory=list)

    def start(self) -> None:
        self.pods = [Pod(new=False, ready=False) for _ in range(self.replicas)]
        for pod in self.pods:
            if self.may_ready(self.pods):
                pod.ready = True

    def ready(self) -> int:
        return sum(p.ready for p in self.pods)

    def done(self) -> bool:
        """Complete as the controller reports it: only new pods, as many as asked, enough ready."""
        only_new = all(p.new for p in self.pods) and len(self.pods) == self.replicas
        return only_new and self.ready() >= self.replicas - self.max_unavailable

    def step(self) -> None:
        for pod in self.pods:
            if pod.new and not pod.ready and self.may_ready(self.pods):
                pod.ready = True
        new = [p for p in self.pods if p.new]
        grow = min(self.replicas + self.max_surge - len(self.pods), self.replicas - len(new))
        self.pods += [Pod(new=True) for _ in range(max(0, grow))]
        old = [p for p in self.pods if not p.new]
        min_available = self.replicas - self.max_unavailable
        new_unavailable = sum(1 for p in self.pods if p.new and not p.ready)
        budget = len(self.pods) - min_available - new_unavailable
        for pod in [p for p in old if not p.ready] + [p for p in old if p.ready]:
            if budget <= 0 or (pod.ready and self.ready() - 1 < min_available):
                break
            self.pods.remove(pod)
            budget -= 1


def composed() -> tuple[int, int, int]:
    spec = objects()["epp-deployment"]["spec"]
    rolling = spec["strategy"]["rollingUpdate"]
    return spec["replicas"], rolling["maxSurge"], rolling["maxUnavailable"]


def play(rollout: Rollout, steps: int = 20) -> list[int]:
    rollout.start()
    seen = [rollout.ready()]
    for _ in range(steps):
        if rollout.done():
            break
        rollout.step()
        seen.append(rollout.ready())
    return seen


def every_pod_may_be_ready(_pods: list[Pod]) -> bool:
    return True


def only_a_leader_is_ready(pods: list[Pod]) -> bool:
    return not any(p.ready for p in pods)


def test_the_composed_picker_rollout_finishes_with_a_ready_picker_at_every_step() -> None:
    rollout = Rollout(*composed(), may_ready=every_pod_may_be_ready)
    seen = play(rollout)
    assert rollout.done()
    assert min(seen) >= 1


def test_the_model_sees_the_gap_a_single_replaced_picker_leaves() -> None:
    # One picker, replaced before its successor is ready: the outage the two pickers avoid.
    rollout = Rollout(1, 0, 1, may_ready=every_pod_may_be_ready)
    assert min(play(rollout)) == 0


def test_leader_election_would_stall_the_same_rollout() -> None:
    # Why the picker runs without it: only the leader is ready, the old leader may not go
    # while it is the one available pod, and no new pod is ever ready while it stays.
    rollout = Rollout(*composed(), may_ready=only_a_leader_is_ready)
    play(rollout)
    assert not rollout.done()
