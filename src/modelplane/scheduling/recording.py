"""The schedules answered while a caller listens: how ``modelplane explain`` reports the very
placements ``modelplane render`` made, from the scheduler's own trace, with no second path.

Explain renders the input as render does and listens meanwhile; each time a composer asks the
scheduler to place a deployment, the answer is heard. The last answer for a deployment is the
one its rendered replicas were stamped from (a render ends on a pass that changed nothing);
earlier ones say why a replica kept since was placed where it stands.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from modelplane.kube import objects
from modelplane.scheduling.placement import Schedule

Key = tuple[str, str]
"""(namespace, name) of a ModelDeployment."""


@dataclass
class Heard:
    """Every schedule answered, per deployment, in the order asked."""

    answers: dict[Key, list[Schedule]] = field(default_factory=dict)

    def of(self, namespace: str, name: str, replicas: int) -> list[Schedule]:
        """The schedules answered for the deployment asking ``replicas``, in the order asked (a
        rollout's surge asks for more, and is counted apart; when every answer did, all)."""
        answers = self.answers.get((namespace, name), [])
        return [s for s in answers if s.desired == replicas] or answers


_listening: ContextVar[Heard | None] = ContextVar("scheduling_recording", default=None)


@contextmanager
def listening() -> Iterator[Heard]:
    """Hear every schedule answered until the block ends."""
    heard = Heard()
    token = _listening.set(heard)
    try:
        yield heard
    finally:
        _listening.reset(token)


def answered(deployment: Mapping[str, Any], plan: Schedule) -> None:
    """Tell whoever listens (nobody, in the function) what the scheduler answered."""
    heard = _listening.get()
    if heard is None:
        return
    # The API server's default namespace, as every composer reads a namespaced object.
    key = (objects.namespace(deployment) or "default", objects.name(deployment))
    heard.answers.setdefault(key, []).append(plan)
