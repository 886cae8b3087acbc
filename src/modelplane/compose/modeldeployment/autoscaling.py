"""Autoscaling: the KEDA ScaledObject that drives a ModelDeployment's scale subresource from its
engines' load, and the Prometheus queries its targets become (docs/design/autoscaling.md).

KEDA writes ``spec.replicas`` through the scale subresource; everything downstream (scheduler,
rollout, status) reads that one number as it does in manual mode. The composer only keeps it
inside ``[minReplicas, maxReplicas]`` (``desired_replicas``), so a hand edit or a lagging
autoscaler never takes the deployment outside what its owner allowed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from modelplane.compose.shared import scaletozero
from modelplane.compose.shared.metricsconfig import MetricsEndpoint
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.labels import DEPLOYMENT, DEPLOYMENT_NAMESPACE, LLMD_ROLE, REPLICA

SCALED_OBJECT = "scaled-object"
"""The composition resource name of the deployment's ScaledObject."""
FRONT_DOOR = "front-door"
"""The trigger that wakes a sleeping deployment: requests through its ModelServices' lanes."""
FRONT_DOOR_THRESHOLD = 1_000_000
"""Requests a second one replica is asked for on the front-door trigger: beyond what any front
gateway carries, so the HPA's ``ceil(rate / threshold)`` never asks more than one replica for it
and the load triggers alone size an awake deployment."""
NEVER_ACTIVE = 1_000_000_000_000
"""A load trigger's activationThreshold on a deployment that may sleep: above any queue, summed
KV use or latency times replicas a fleet of at most 1,000 replicas reports, so idleness is the
front door's alone (a KV-cache reading at rest must not keep the deployment awake)."""
ACTIVATION_ANNOTATION = "modelplane.ai/activation-clusters"
"""On the ScaledObject: the clusters its front-door trigger reads, comma-separated, so a later
reconcile can keep them while no ModelService says otherwise (autoscaler.py)."""
FORCE_ACTIVATION = "autoscaling.keda.sh/force-activation"
"""KEDA v2.20.2 counts a ScaledObject annotated ``"true"`` active on every poll whatever its
triggers read (``apis/keda/v1alpha1/scaledobject_types.go`` ``NeedToForceActivation``), and an
active one with replicas gets ``lastActiveTime`` refreshed, never scaled to zero
(``pkg/scaling/executor/scale_scaledobjects.go`` ``RequestScale``). Its scale loop reads the
ScaledObject afresh each poll (``pkg/scaling/scale_handler.go`` ``checkScalers``)."""


@dataclass(frozen=True)
class EngineMetrics:
    """What one engine family calls the series the targets read (its /metrics)."""

    waiting: str
    kv_cache: str
    """A gauge in [0, 1]."""
    ttft: str
    itl: str
    """Histograms: ``<name>_bucket`` is queried."""


# The two families Modelplane labels serving pods with (llm-d.ai/engine-type): vLLM's V1 engine
# (vllm/v1/metrics/loggers.py) and SGLang (python/sglang/srt/metrics/collector.py).
ENGINES = (
    EngineMetrics(
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds",
        "vllm:inter_token_latency_seconds",
    ),
    EngineMetrics(
        "sglang:num_queue_reqs",
        "sglang:token_usage",
        "sglang:time_to_first_token_seconds",
        "sglang:inter_token_latency_seconds",
    ),
)

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s)$")


def seconds(duration: str) -> float:
    """``"800ms"`` or ``"1.5s"`` in seconds (the XRD's pattern admits nothing else)."""
    match = _DURATION.match(duration)
    if match is None:
        raise ValueError(f"not a duration in ms or s: {duration!r}")
    value = float(match.group(1))
    return value / 1000 if match.group(2) == "ms" else value


def prometheus_label(label: str) -> str:
    """A pod label as Prometheus names it once a PodMonitor copies it (podTargetLabels)."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", label)


REPLICA_SERIES = prometheus_label(REPLICA)
"""The series label naming a replica (the engines' PodMonitor copies it from the pods)."""


def selector(namespace: str, name: str, phase: str = "") -> str:
    """The series of one deployment's engines, fleet-wide; of one phase's (``prefill``,
    ``decode``: the pods' ``llm-d.ai/role``) when given."""
    role = f',{prometheus_label(LLMD_ROLE)}="{phase}"' if phase else ""
    return (
        f'{{{prometheus_label(DEPLOYMENT)}="{name}",'
        f'{prometheus_label(DEPLOYMENT_NAMESPACE)}="{namespace}"{role}}}'
    )


def _either(of: str, sel: str) -> str:
    """Every engine family's ``of`` metric, joined with ``or``."""
    return " or ".join(f"{getattr(e, of)}{sel}" for e in ENGINES)


def _p90(of: str, sel: str) -> str:
    rates = " or ".join(f"rate({getattr(e, of)}_bucket{sel}[2m])" for e in ENGINES)
    return f"histogram_quantile(0.9, sum by (le) ({rates}))"


def _per_replica(sel: str) -> str:
    """How many replicas report: every replica's engines export the waiting gauge."""
    return f"count(count by ({REPLICA_SERIES}) ({_either('waiting', sel)}))"


@dataclass(frozen=True)
class Trigger:
    name: str
    query: str
    threshold: float
    """Per replica: every trigger is an AverageValue (below)."""


def triggers(
    targets: Mapping[str, Any], namespace: str, name: str, phased: bool = False
) -> list[Trigger]:
    """One Prometheus trigger per target set; the HPA follows the largest replica count asked.

    Every query is a fleet-wide total the HPA divides by the per-replica threshold
    (``AverageValue``: ``ceil(total / threshold)``). A ``Value`` target would make the HPA count
    ready pods of the deployment in the control plane's namespace, where no engine runs
    (tests/conformance/test_hpa.py); so a per-replica level (KV use, a latency) is summed over
    the replicas or multiplied by their count, which gives HPA's proportional
    ``ceil(replicas * level / target)``.

    ``phased`` (a PrefillDecode deployment): each target reads the phase it measures, as
    Dynamo's planner does: the queue and time to first token the prefill engines, KV use and
    inter-token latency the decode engines."""
    every = selector(namespace, name)
    prefill = selector(namespace, name, "prefill") if phased else every
    decode = selector(namespace, name, "decode") if phased else every
    out = []
    if "waitingRequestsPerReplica" in targets:
        query = f"sum({_either('waiting', prefill)})"
        out.append(Trigger("waiting", query, targets["waitingRequestsPerReplica"]))
    if "kvCacheUtilization" in targets:
        query = f"sum(avg by ({REPLICA_SERIES}) ({_either('kv_cache', decode)}))"
        out.append(Trigger("kv-cache", query, targets["kvCacheUtilization"] / 100))
    latencies = (
        ("timeToFirstToken", "ttft-p90", "ttft", prefill),
        ("interTokenLatency", "itl-p90", "itl", decode),
    )
    for target, trigger, of, sel in latencies:
        if target in targets:
            query = f"{_p90(of, sel)} * {_per_replica(every)}"
            out.append(Trigger(trigger, query, seconds(targets[target]["p90"])))
    return out


def phased(md: Mapping[str, Any]) -> bool:
    """Whether the deployment serves prefill and decode on engines of their own."""
    return objects.dig(md, "spec", "template", "spec", "serving", "mode") == "PrefillDecode"


def minimum(spec: Mapping[str, Any], wakes: bool = True) -> int:
    """The fewest replicas the deployment may have: ``minReplicas``, 0 only for one that may
    sleep and that something can wake (``wakes``: a ModelService's front door, or not known yet)."""
    if scaletozero.may_sleep({"spec": spec}):
        return 0 if wakes else 1
    return int(objects.dig(spec, "autoscaling", "minReplicas", default=1))


def desired_replicas(spec: Mapping[str, Any], wakes: bool = True) -> int:
    """``spec.replicas`` within the autoscaling bounds (``minReplicas`` when unset); 0 is within
    them for a deployment that may sleep and that something wakes (``minimum``)."""
    scaling = spec.get("autoscaling")
    if not scaling:
        return int(spec["replicas"])
    low, high = minimum(spec, wakes), int(scaling["maxReplicas"])
    return min(high, max(low, int(spec.get("replicas", low))))


def activation_query(clusters: Iterable[str]) -> str:
    """The front door's request rate over ``clusters`` (``scaletozero.ACTIVATION_SERIES``); the
    alternatives sorted and deduplicated, so the same clusters always read the same query. Each
    is regex-escaped, then its backslashes doubled: PromQL reads a double-quoted string with Go's
    escapes, which refuse ``\\-`` or ``\\.``."""
    escaped = (re.escape(c).replace("\\", "\\\\") for c in sorted(set(clusters)))
    alternatives = "|".join(escaped)
    return f'sum(rate({scaletozero.ACTIVATION_SERIES}{{envoy_cluster_name=~"{alternatives}"}}[1m]))'


def _behavior(behavior: Mapping[str, Any]) -> Obj:
    """The XRD's per-direction window and step, as autoscaling/v2 HPA behavior."""
    out: Obj = {}
    for direction in ("scaleUp", "scaleDown"):
        rule = behavior.get(direction)
        if not rule:
            continue
        hpa: Obj = {}
        if "stabilizationWindowSeconds" in rule:
            hpa["stabilizationWindowSeconds"] = rule["stabilizationWindowSeconds"]
        if "maxReplicasPerStep" in rule:
            period = rule.get("periodSeconds", 60)
            step = {"type": "Pods", "value": rule["maxReplicasPerStep"], "periodSeconds": period}
            hpa["policies"] = [step]
        out[direction] = hpa
    return out


def _trigger(t: Trigger, endpoint: MetricsEndpoint, activation: str = "") -> Obj:
    metadata = {"serverAddress": endpoint.server_address, "query": t.query}
    metadata["threshold"] = f"{t.threshold:g}"
    if activation:
        metadata["activationThreshold"] = activation
    out: Obj = {"type": "prometheus", "name": t.name, "metricType": "AverageValue"}
    out["metadata"] = metadata
    if endpoint.authentication:
        out["authenticationRef"] = dict(endpoint.authentication)
    return out


def _front_door(clusters: Sequence[str], endpoint: MetricsEndpoint) -> Obj:
    """Active on the first request through a lane (activationThreshold 0); an empty result (no
    gateway scraped yet) reads 0 rather than failing the ScaledObject."""
    trigger = Trigger(FRONT_DOOR, activation_query(clusters), FRONT_DOOR_THRESHOLD)
    out = _trigger(trigger, endpoint, activation="0")
    out["metadata"]["threshold"] = str(FRONT_DOOR_THRESHOLD)
    out["metadata"]["ignoreNullValues"] = "true"
    return out


def scaled_object(
    md: Mapping[str, Any], endpoint: MetricsEndpoint, clusters: Sequence[str] = ()
) -> Obj:
    """The ScaledObject that scales ``md`` (which has ``spec.autoscaling``) on its targets.

    A deployment that may sleep sleeps only when ``clusters`` (the front-door Envoy clusters of
    the ModelServices that select it) can wake it: then KEDA may take it to zero once no request
    came through them for ``scaleToZero.idleSeconds``, and wakes it on the next one. Without
    them it keeps one replica: nothing would wake it."""
    meta, scaling = md["metadata"], md["spec"]["autoscaling"]
    name, namespace = meta["name"], meta["namespace"]
    sleeps = scaletozero.may_sleep(md) and bool(clusters)
    activation = f"{NEVER_ACTIVE}" if sleeps else ""
    load = triggers(scaling["targets"], namespace, name, phased(md))
    spec: Obj = {
        "scaleTargetRef": {"apiVersion": md["apiVersion"], "kind": md["kind"], "name": name},
        "pollingInterval": 30,
        "minReplicaCount": minimum(md["spec"], sleeps),
        "maxReplicaCount": int(scaling["maxReplicas"]),
        "triggers": [_trigger(t, endpoint, activation) for t in load],
    }
    metadata: Obj = {"name": name, "namespace": namespace}
    if sleeps:
        idle = int(scaling["scaleToZero"]["idleSeconds"])
        spec["cooldownPeriod"] = idle
        # KEDA sleeps a ScaledObject never active since creation after this alone (default 0).
        spec["initialCooldownPeriod"] = idle
        spec["triggers"].append(_front_door(clusters, endpoint))
        metadata["annotations"] = {ACTIVATION_ANNOTATION: ",".join(sorted(set(clusters)))}
    behavior = _behavior(scaling.get("behavior") or {})
    if behavior:
        spec["advanced"] = {"horizontalPodAutoscalerConfig": {"behavior": behavior}}
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": metadata,
        "spec": spec,
    }


def held_awake(scaled: Obj) -> Obj:
    """``scaled`` forced active: KEDA keeps the deployment awake, and its cooldown starts only
    once the annotation goes."""
    return objects.assoc(scaled, ("metadata", "annotations", FORCE_ACTIVATION), "true")


def woken_by(scaled: Mapping[str, Any] | None) -> list[str]:
    """The clusters a composed ScaledObject's front-door trigger reads (none: it cannot sleep)."""
    listed = objects.annotations(scaled).get(ACTIVATION_ANNOTATION) if scaled else None
    return [c for c in str(listed).split(",") if c] if listed else []
