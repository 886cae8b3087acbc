"""The deployment composer's autoscaling stage: the replica count placement reads, the
ScaledObject that drives it, and what KEDA's HPA last decided (docs/design/autoscaling.md).

KEDA writes ``spec.replicas`` through the scale subresource. Placement reads that number clamped
into ``[minReplicas, maxReplicas]``; the ScaledObject is composed once the platform has named its
fleet-wide Prometheus, and kept as last composed while that name cannot be read (nothing that
scales is dropped because a lookup came back empty). Its state and the HPA's are reported in
``status.autoscaling`` and the ``Autoscaling`` condition, never in the deployment's readiness:
a deployment whose autoscaler is down still serves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from modelplane.apis import API_VERSION
from modelplane.compose.modeldeployment.autoscaling import (
    FORCE_ACTIVATION,
    SCALED_OBJECT,
    desired_replicas,
    held_awake,
    minimum,
    scaled_object,
    woken_by,
)
from modelplane.compose.shared import scaletozero
from modelplane.compose.shared.metricsconfig import (
    ENVIRONMENT_CONFIG_API,
    METRICS_CONFIG,
    MetricsEndpoint,
)
from modelplane.composer import (
    Condition,
    Desired,
    Inputs,
    Requirement,
    Result,
    carried,
    namespace_of,
)
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT
from modelplane.reasons import ModelDeployment, ModelReplica
from modelplane.shortlist import shortlist

METRICS = "autoscaling-metrics"
"""The requirement for the EnvironmentConfig naming the fleet-wide Prometheus."""
HPA = "autoscaling-hpa"
"""The requirement for the HorizontalPodAutoscaler KEDA makes from the ScaledObject."""
HPA_PREFIX = "keda-hpa-"
"""KEDA names the HPA it drives after the ScaledObject (checked in tests/conformance)."""
SERVICES = "autoscaling-services"
"""The requirement for the ModelServices of the namespace, of a deployment that may sleep: those
that select it publish the front-door clusters whose requests wake it."""

AUTOSCALING = ModelDeployment.AUTOSCALING
SERVING = ModelDeployment.REPLICAS_SERVING


@dataclass(frozen=True)
class Wake:
    """What can wake a deployment that may sleep, as far as the ModelServices read tell."""

    read: bool = True
    """False until the ModelServices are read: nothing is concluded from a list not read."""
    clusters: tuple[str, ...] = ()
    """The front-door clusters the ScaledObject wakes on (none: it keeps one replica)."""
    services: tuple[str, ...] = ()
    """The ModelServices that select the deployment, ``namespace/name``."""
    kept: bool = False
    """The clusters are the ScaledObject's own, kept: the services selecting it published none."""

    @property
    def wakes(self) -> bool:
        """Whether the deployment may be at zero: something wakes it, or that is not known yet
        (no replica is placed for a list not read)."""
        return not self.read or bool(self.clusters)


@dataclass(frozen=True)
class Scaling:
    """What the autoscaling stage adds to the deployment's result."""

    composite: Obj
    """The deployment as placement reads it: ``spec.replicas`` within the bounds."""
    resources: dict[str, Desired] = field(default_factory=dict)
    requirements: dict[str, Requirement] = field(default_factory=dict)
    condition: Condition | None = None
    status: Obj | None = None
    asleep: str = ""
    """What wakes the deployment, while its autoscaler holds it at zero (else empty)."""
    idles_to_zero: bool = False
    """Awake, with a ScaledObject that may take it to zero once idle."""
    idle_counted: bool = True
    """Whether KEDA counts the idle time from a moment a replica served (``_idle_counted``)."""

    def into(self, result: Result) -> Result:
        """``result`` with the ScaledObject, the lookups and the report added."""
        if self.condition is None:
            return result
        result.resources.update(self.resources)
        result.requirements.update(self.requirements)
        if self.asleep:
            result.conditions = [_asleep_serving(c, self.asleep) for c in result.conditions]
        status = dict(self.status or {})
        condition = self.condition
        serving = _serving(result)
        if self.idles_to_zero and not (serving and self.idle_counted):
            _hold_awake(result)
            if not serving:
                status["waking"] = True
            held = SERVED if serving else WAKING
            condition = condition._replace(message=f"{condition.message}; {held}")
        result.conditions.append(condition)
        result.status["autoscaling"] = status
        # The HPA refuses a scale target that reports no selector, whatever its metrics are.
        result.status["selector"] = f"{DEPLOYMENT}={objects.name(self.composite)}"
        return result


WAKING = (
    "no replica serves yet: the autoscaler holds it awake until one does, and counts its idle "
    "time from then"
)
SERVED = (
    "a replica serves: the autoscaler holds it awake until its next poll, so that its idle "
    "time counts from then"
)


def _serving(result: Result) -> bool:
    """Whether a replica of the result serves (its status, composed this round, says so)."""
    replicas = result.status.get("replicas")
    return isinstance(replicas, dict) and int(replicas.get("ready") or 0) > 0


def _hold_awake(result: Result) -> None:
    """A deployment awake that may sleep but has no replica serving (woken, just created, or
    every replica down) is not put back to zero: a cold start longer than its idle time would
    otherwise sleep it again before the request that woke it could be served."""
    scaled = result.resources[SCALED_OBJECT]
    result.resources[SCALED_OBJECT] = scaled._replace(resource=held_awake(scaled.resource))


def hpa_name(md: Mapping[str, Any] | None) -> str:
    return HPA_PREFIX + objects.name(md)


def requirements(md: Mapping[str, Any]) -> dict[str, Requirement]:
    config = Requirement(ENVIRONMENT_CONFIG_API, "EnvironmentConfig", match_name=METRICS_CONFIG)
    hpa = Requirement(
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        match_name=hpa_name(md),
        namespace=objects.namespace(md) or None,
    )
    asks = {METRICS: config, HPA: hpa}
    if scaletozero.may_sleep(md):
        # Every one of the namespace: a selector is the service's, not a label on it.
        services = Requirement(API_VERSION, "ModelService", namespace=namespace_of(md) or None)
        asks[SERVICES] = services
    return asks


def selecting(services: list[Obj], md: Mapping[str, Any]) -> list[Obj]:
    """The ModelServices an entry of which selects the deployment's replicas."""
    return [ms for ms in services if any(_selects(e, md) for e in _endpoints(ms))]


def _endpoints(ms: Obj) -> list[Any]:
    entries = objects.spec(ms).get("endpoints")
    return entries if isinstance(entries, list) else []


def _selects(entry: Any, md: Mapping[str, Any]) -> bool:
    labels = objects.dig(entry, "selector", "matchLabels") if isinstance(entry, dict) else None
    return isinstance(labels, dict) and scaletozero.selects(labels, md)


def wake(inputs: Inputs) -> Wake:
    """What wakes ``inputs``' deployment. The clusters the services that select it publish; if
    they select it but publish none (a service not composed yet, its status not written), the
    clusters the ScaledObject already wakes on: a service that still selects the deployment is
    no evidence its lane went. None only once no service selects it."""
    md = inputs.composite
    if not scaletozero.may_sleep(md):
        return Wake()
    if SERVICES not in inputs.required:
        return Wake(read=False)
    services = selecting(list(inputs.required[SERVICES] or []), md)
    names = tuple(sorted(f"{namespace_of(ms)}/{objects.name(ms)}" for ms in services))
    published = {c for ms in services for c in scaletozero.activation_clusters(ms)}
    if published:
        return Wake(clusters=tuple(sorted(published)), services=names)
    kept = woken_by(inputs.observed.get(SCALED_OBJECT)) if services else []
    return Wake(clusters=tuple(kept), services=names, kept=bool(kept))


def stage(inputs: Inputs) -> Scaling:
    """The autoscaling stage of ``inputs``' deployment; a deployment without
    ``spec.autoscaling`` passes through unchanged (a ScaledObject composed before is then not
    desired, and goes)."""
    md = inputs.composite
    spec = objects.spec(md)
    scaling = spec.get("autoscaling")
    if not scaling:
        return Scaling(md)
    woken = wake(inputs)
    replicas = desired_replicas(spec, woken.wakes)
    composite = md
    if replicas != spec["replicas"]:
        composite = {**md, "spec": {**spec, "replicas": replicas}}
    # The minimum in force: one for a deployment that may sleep but that nothing wakes.
    low = minimum(spec, woken.wakes)
    bounds = {"minReplicas": low, "maxReplicas": int(scaling["maxReplicas"])}
    asks = requirements(md)
    observed = inputs.observed.get(SCALED_OBJECT)
    unread = [f"the EnvironmentConfig {METRICS_CONFIG}"] if METRICS not in inputs.required else []
    if not woken.read:
        unread.append(f"the ModelServices of namespace {namespace_of(md)}")
    if unread:
        # Nothing new is composed from half the inputs: what was composed stays as it was.
        reading = "reading " + " and ".join(unread)
        waiting = Condition(AUTOSCALING, "Unknown", ModelDeployment.WAITING_FOR_AUTOSCALER, reading)
        return Scaling(composite, _kept(observed), asks, waiting, bounds)
    configs = inputs.required[METRICS]
    endpoint = MetricsEndpoint.from_config(configs[0] if configs else None)
    clamped = _clamped(spec, replicas, low)
    if endpoint is None:
        unnamed = _no_endpoint(bool(configs), clamped)
        return Scaling(composite, _kept(observed), asks, unnamed, bounds)
    # Ready regardless of KEDA's own report: the deployment serves whatever its autoscaler says;
    # the Autoscaling condition carries KEDA's state.
    resources = {SCALED_OBJECT: Desired(scaled_object(md, endpoint, woken.clusters), "True")}
    hpas = inputs.required.get(HPA)
    hpa = hpas[0] if hpas else None
    asleep = _asleep(md, woken) if woken.clusters and replicas == 0 else ""
    status = {**bounds, **_decided(hpa)}
    if woken.clusters:
        status |= {"asleep": bool(asleep), "activationClusters": list(woken.clusters)}
    judged = _sleep(md, woken, asleep, _judge(observed, hpa, clamped))
    idles_to_zero = bool(woken.clusters) and replicas > 0
    counted = _idle_counted(observed, inputs.observed.values())
    return Scaling(composite, resources, asks, judged, status, asleep, idles_to_zero, counted)


def _idle_counted(scaled: Obj | None, observed: Iterable[Obj]) -> bool:
    """Whether KEDA counts the deployment's idle time from a moment a replica served.

    A ScaledObject forced active has KEDA refresh ``status.lastActiveTime`` on each poll, and
    once the annotation goes, the cooldown runs from the last of them (keda v2.20.2,
    pkg/scaling/executor/scale_scaledobjects.go ``RequestScale``, ``scaleToZeroOrIdle``). Let go
    as soon as a replica serves, that poll can be a whole polling interval old: an idle time no
    longer than the interval put the woken deployment back to zero a second after its replica
    served, before the client that woke it retried. So the hold stays until KEDA has polled
    since a replica began serving (its ``ModelServing`` turned True): both times are written by
    the control plane, evidence rather than a clock of the function's own, in whole seconds, so
    a poll in the same second may have come before and only a later one counts. Not forced now,
    it counts as KEDA counts it."""
    if objects.annotations(scaled).get(FORCE_ACTIVATION) != "true":
        return True
    polled = objects.seconds(objects.dig(scaled, "status", "lastActiveTime"))
    since = [_serving_since(obj) for obj in observed if obj.get("kind") == "ModelReplica"]
    served = [t for t in since if t is not None]
    return polled is not None and bool(served) and polled > min(served)


def _serving_since(replica: Obj) -> float | None:
    serving = objects.condition(replica, ModelReplica.MODEL_SERVING)
    if serving is None or serving.get("status") != "True":
        return None
    return objects.seconds(serving.get("lastTransitionTime"))


def _asleep(md: Mapping[str, Any], woken: Wake) -> str:
    idle = objects.dig(md, "spec", "autoscaling", "scaleToZero", "idleSeconds")
    return (
        f"asleep at zero replicas: no request came through the front door for {idle} s "
        f"(spec.autoscaling.scaleToZero.idleSeconds); the first request through "
        f"{_named(woken.services)} wakes it, after a cold start"
    )


def _sleep(md: Mapping[str, Any], woken: Wake, asleep: str, judged: Condition) -> Condition:
    """The Autoscaling condition of a deployment that may sleep: asleep, or unable to sleep
    (NothingWakes), unless KEDA itself is failing, which says more (nothing wakes a deployment
    whose ScaledObject KEDA refuses)."""
    if not scaletozero.may_sleep(md) or judged.status == "False":
        return judged
    if not woken.clusters:
        return _nothing_wakes(md, woken, judged)
    if asleep:
        return Condition(AUTOSCALING, "True", ModelDeployment.SCALED_TO_ZERO, asleep)
    if woken.kept:
        # No evidence either way: the service still selects the deployment.
        kept = (
            f"; {_named(woken.services)} published no front-door clusters: it still wakes on "
            "those it published before"
        )
        return judged._replace(message=judged.message + kept)
    return judged


def _named(services: tuple[str, ...]) -> str:
    if not services:
        return "its ModelServices"
    return f"ModelService {shortlist(services, 3)}"


def _nothing_wakes(md: Mapping[str, Any], woken: Wake, judged: Condition) -> Condition:
    if woken.services:
        why = f"{_named(woken.services)} selects it but has published no front-door clusters yet"
    else:
        why = f"no ModelService in namespace {namespace_of(md)} selects it"
    message = (
        f"spec.autoscaling.minReplicas is 0, but {why}: nothing would wake it at zero, so it "
        f"keeps one replica; {judged.message}"
    )
    return Condition(AUTOSCALING, "False", ModelDeployment.NOTHING_WAKES, message)


def _asleep_serving(cond: Condition, asleep: str) -> Condition:
    """ReplicasServing of a deployment asleep: not broken (as Knative reports a revision scaled
    to zero Ready), and the message says what wakes it."""
    if cond.type != SERVING or cond.status != "True":
        return cond
    return Condition(SERVING, "True", ModelDeployment.ASLEEP, asleep)


def _kept(observed: Obj | None) -> dict[str, Desired]:
    return {} if observed is None else {SCALED_OBJECT: Desired(carried(observed), "True")}


def _no_endpoint(config_exists: bool, clamped: str) -> Condition:
    missing = "has no data.prometheus.serverAddress" if config_exists else "does not exist"
    # Written as it stands unless outside the bounds (one that nothing would wake at zero).
    stands = clamped or ", so spec.replicas stands as written"
    message = (
        f"the EnvironmentConfig {METRICS_CONFIG} {missing}: no fleet-wide Prometheus to read "
        f"load from{stands}"
    )
    return Condition(AUTOSCALING, "False", ModelDeployment.NO_METRICS_ENDPOINT, message)


def _decided(hpa: Obj | None) -> Obj:
    """What KEDA's HPA last decided, as status.autoscaling shows it."""
    status = objects.status(hpa)
    keys = ("desiredReplicas", "currentReplicas", "lastScaleTime")
    return {key: status[key] for key in keys if status.get(key) is not None}


def _clamped(spec: Mapping[str, Any], replicas: int, low: int) -> str:
    written = spec["replicas"]
    if written == replicas:
        return ""
    high = int(spec["autoscaling"]["maxReplicas"])
    return f"; spec.replicas {written} is outside [{low}, {high}]: {replicas} placed"


def _judge(observed: Obj | None, hpa: Obj | None, clamped: str) -> Condition:
    """The Autoscaling condition from KEDA's report on the ScaledObject and its HPA's."""
    ready = objects.condition(observed, "Ready")
    waiting = ModelDeployment.WAITING_FOR_AUTOSCALER
    if ready is None:
        message = "the ScaledObject reports no Ready condition yet (is KEDA running?)"
        return Condition(AUTOSCALING, "Unknown", waiting, message + clamped)
    if ready.get("status") != "True":
        said = str(ready.get("message") or ready.get("reason") or "not Ready")
        failing = ModelDeployment.AUTOSCALER_NOT_READY
        return Condition(AUTOSCALING, "False", failing, f"KEDA: {said}" + clamped)
    if hpa is None:
        message = f"the HorizontalPodAutoscaler {hpa_name_of(observed)} is not read yet"
        return Condition(AUTOSCALING, "Unknown", waiting, message + clamped)
    limited = objects.condition(hpa, "ScalingLimited")
    if limited is not None and limited.get("reason") == "TooManyReplicas":
        message = f"HPA: {limited.get('message', '')}"
        return Condition(AUTOSCALING, "True", ModelDeployment.AT_MAX_REPLICAS, message + clamped)
    return Condition(AUTOSCALING, "True", ModelDeployment.SCALING, _last(hpa) + clamped)


def hpa_name_of(scaled: Obj | None) -> str:
    """The HPA KEDA reports for the ScaledObject, or the name it gives one."""
    reported = objects.status(scaled).get("hpaName")
    return str(reported) if reported else hpa_name(scaled)


def _last(hpa: Obj) -> str:
    status = objects.status(hpa)
    desired, when = status.get("desiredReplicas"), status.get("lastScaleTime")
    if desired is None:
        return "the autoscaler has not decided yet"
    said = f"the autoscaler asks for {desired} replicas"
    return f"{said} (last scaled {when})" if when else said
