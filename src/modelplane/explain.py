"""`modelplane explain`: why each replica of each ModelDeployment went where it did.

Reads manifests (files, directories, ``-``) and renders them as ``modelplane render`` does
(the same composers, admission and simulated clusters: one scheduling path for both). Then,
per ModelDeployment, from the schedule its composer asked for, it reports a headline (replicas
placed of those asked) and every cluster considered, in natural order (eu-west-2 before
eu-west-10), from the scheduler's own trace: what each cluster took, or why it could not, pool
by pool. When several clusters share one verdict and reason they are reported once, counted.
A request no device matches quotes the selector that no device satisfies. ``-o json`` carries
the same facts as rows (deployment, cluster, pool, engine, member, request, verdict, reason).

Deployments are explained in namespace/name order. Each sees the others as render's passes do:
through what each cluster publishes of the replicas it admitted.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from modelplane import exits, manifests
from modelplane.apis import GROUP
from modelplane.compose.admission import Admission
from modelplane.compose.modeldeployment.autoscaling import desired_replicas
from modelplane.compose.registry import default_registry
from modelplane.composer import namespace_of
from modelplane.explain_autoscaling import (
    Autoscaling,
    Leaving,
    Next,
    autoscaling_of,
    first_to_leave,
    next_replica,
)
from modelplane.kube import objects
from modelplane.kube.objects import Obj
from modelplane.manifests import Manifest, ManifestError, load, require_name
from modelplane.render import RenderError, api_server_admission, located, render_documents
from modelplane.scheduling.demand import Request, parse_engines
from modelplane.scheduling.devices import DeviceKind, device_kinds, matches
from modelplane.scheduling.hints import capacity_hint
from modelplane.scheduling.placement import (
    POOL_ROOM,
    ROOM,
    ClusterTrace,
    PoolTrace,
    ReplicaPlacement,
    Schedule,
    Score,
)
from modelplane.scheduling.recording import listening
from modelplane.scheduling.selection import none_matches, unselected, wanted
from modelplane.shortlist import plural, shortlist
from modelplane.simulate import simulate_stack

COMMAND = "explain"
_KINDS = ("InferenceCluster", "InferenceClass", "ModelReplica", "ModelDeployment", "ModelCache")
GROUP_AT = 3
"""Clusters sharing one verdict and reason are reported once, counted, from this many on."""
NAMES_SHOWN = 5
"""Cluster names a counted group lists before "and N more"."""

TAKEN = "taken"
NOT_NEEDED = "not-needed"
REJECTED = "rejected"
INELIGIBLE = "ineligible"
NOT_CONSIDERED = "not-considered"

_MEMBER_REASON = re.compile(r"^engine (?P<engine>\S+) member (?P<member>\d+): (?P<rest>.*)$")
_NO_MATCH = re.compile(
    r"^no device of class (?P<cls>\S+) matches request (?P<request>[^\s:]+)(?::|$)"
)
_REQUEST = re.compile(r"\brequest (?P<request>[^\s,;]+)")
_ENGINE = re.compile(r"\bengine (?P<engine>[^\s,;]+)")
_USES = re.compile(r"replica (?P<replica>\d+) engine (?P<engine>[^\s,;]+)")


def load_manifests(paths: Iterable[str]) -> list[Obj]:
    """Every object in the files given, recursively in the directories given, and on standard
    input for ``-``."""
    return [m.obj for m in load(paths)]


@dataclass(frozen=True)
class Decision:
    """One fact of the trace: a cluster's verdict (``pool`` None) or one of its pools'."""

    deployment: str
    cluster: str
    pool: str | None
    verdict: str
    reason: str
    engine: str | None = None
    member: int | None = None
    request: str | None = None
    selector: str | None = None
    """The request's selector expression no device of the pool's class satisfies."""
    hint: str = ""
    """What a capacity the selector compares is on the pool's devices, and the nearest value
    that would match (``hints.capacity_hint``)."""
    replicas: tuple[int, ...] = ()
    scores: tuple[Obj, ...] = ()
    """On a cluster that took new replicas: per replica, why it won and the terms that ranked
    it (``Score.to_dict``)."""

    def to_dict(self) -> Obj:
        return {
            "deployment": self.deployment,
            "cluster": self.cluster,
            "pool": self.pool,
            "engine": self.engine,
            "member": self.member,
            "request": self.request,
            "verdict": self.verdict,
            "reason": self.reason,
            "selector": self.selector,
            "hint": self.hint,
            "replicas": list(self.replicas),
            "scores": list(self.scores),
        }


@dataclass
class ClusterView:
    """What one line (or one counted group) of the text says about a cluster."""

    name: str
    verdict: str
    summary: str
    """The cluster line after the name: what it took, or its verdict and cluster-wide reason."""
    pools: list[str] = field(default_factory=list)
    """Pool lines: ``pool <name>: <reason>``."""

    def key(self) -> tuple[str, str, tuple[str, ...]]:
        return self.verdict, self.summary, tuple(self.pools)


@dataclass
class Explanation:
    """Everything ``explain`` says about one ModelDeployment."""

    namespace: str
    name: str
    plan: Schedule
    decisions: list[Decision]
    clusters: list[ClusterView]
    notes: list[str]
    autoscaling: Autoscaling | None = None
    """With ``spec.autoscaling``: the bounds, the last decision, the next replica's place and
    the first to leave (``explain_autoscaling``)."""

    @property
    def deployment(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def short(self) -> int:
        return max(0, self.plan.desired - self.plan.scheduled)

    def headline(self) -> str:
        line = (
            f"ModelDeployment/{self.deployment}: {self.plan.scheduled} of {self.plan.desired} "
            "replicas placed"
        )
        if self.plan.selector_errors:
            return line + ", its device selectors are invalid"
        return line + (f", {self.short} short" if self.short else "")

    def text(self) -> list[str]:
        lines = [self.headline()]
        lines += [f"  {n}" for n in self.notes]
        for group in _grouped(self.clusters):
            first = group[0]
            subject = first.name if len(group) == 1 else f"{len(group)} clusters"
            if len(first.pools) == 1 and first.verdict == REJECTED and not first.summary:
                lines.append(f"  {subject}: {REJECTED}: {first.pools[0]}")
                pools: list[str] = []
            else:
                lines.append(f"  {subject}: {first.summary or first.verdict}")
                pools = first.pools
            if len(group) > 1:
                lines.append(f"    {shortlist((g.name for g in group), NAMES_SHOWN)}")
            lines += [f"    {p}" for p in pools]
        lines += [
            f"  removing replica {r.index} ({r.name}) from {r.cluster}: {r.reason}"
            for r in self.plan.removed
        ]
        return lines + (self.autoscaling.text() if self.autoscaling is not None else [])

    def to_dict(self) -> Obj:
        out = {
            "deployment": self.deployment,
            "namespace": self.namespace,
            "name": self.name,
            "asked": self.plan.desired,
            "placed": self.plan.scheduled,
            "short": self.short,
            "placements": [_placement(p) for p in self.plan.placements],
            "removed": [
                {"replica": r.index, "name": r.name, "cluster": r.cluster, "reason": r.reason}
                for r in self.plan.removed
            ],
            "selectorErrors": [
                {"request": e.request, "path": e.path, "message": e.message}
                for e in self.plan.selector_errors
            ],
            "shortfall": list(self.plan.shortfall) if self.short else [],
            "decisions": [d.to_dict() for d in self.decisions],
        }
        if self.autoscaling is not None:
            out["autoscaling"] = self.autoscaling.to_dict()
        return out


def explain_all(docs: Sequence[Obj]) -> list[Explanation]:
    """One explanation per ModelDeployment in ``docs``, in namespace/name order.

    The input is rendered as ``modelplane render`` renders it (the same composers, admission
    and simulated clusters, pass after pass until nothing changes), and each deployment is
    explained from the schedule its composer last asked for: explain reports the placements
    render made, with the scheduler's reasons."""
    ours = [d for d in docs if _ours(d)]
    deployments = sorted((d for d in ours if d["kind"] == "ModelDeployment"), key=_identity)
    if not deployments:
        return []
    with listening() as heard:
        rendered = render_documents(
            default_registry(), docs, (), api_server_admission(), simulate_stack
        )
    classes = [d for d in ours if d["kind"] == "InferenceClass"]
    clusters = [d for d in ours if d["kind"] == "InferenceCluster"]
    given = {_identity(d) for d in ours if d["kind"] == "ModelReplica"}
    scaled = _Scaled(docs, rendered, given, clusters, classes)
    out = []
    for md in deployments:
        ns, name = _identity(md)
        answers = heard.of(ns, name, _replicas(md))
        plan = _as_rendered(md, answers, given, clusters) if answers else _unscheduled(md)
        out.append(scaled.into(md, _explanation(md, plan, classes)))
    return out


@dataclass(frozen=True)
class _Scaled:
    """What explaining an autoscaled deployment reads: the input, what render made of it, and
    the input's replicas, clusters and classes."""

    docs: Sequence[Obj]
    rendered: Sequence[Obj]
    given: set[tuple[str, str]]
    clusters: Sequence[Obj]
    classes: Sequence[Obj]

    def into(self, md: Obj, explanation: Explanation) -> Explanation:
        """``explanation`` with the autoscaling block when ``md`` has ``spec.autoscaling``."""
        if objects.spec(md).get("autoscaling"):
            explanation.autoscaling = self.explain(md, explanation.plan)
        return explanation

    def explain(self, md: Obj, plan: Schedule) -> Autoscaling:
        """The autoscaling block: the next replica is what render places with one replica
        more; the first to leave is scale_in's pick among the replicas render made."""
        scaling = objects.spec(md)["autoscaling"]
        low, high = int(scaling.get("minReplicas", 1)), int(scaling["maxReplicas"])
        coming = self.coming(md, plan) if plan.desired < high else None
        leaving = self.leaving(md) if plan.desired > low else None
        return autoscaling_of(md, self.composite(md), coming, leaving)

    def leaving(self, md: Obj) -> Leaving | None:
        """scale_in's first pick among the replicas render made, of ``md`` as render admitted
        it: the replicas are stamped with its defaults, and a rollout's are judged by them."""
        made = [d for d in self.rendered if _ours(d)]

        def of(kind: str) -> list[Obj]:
            return [d for d in made if d["kind"] == kind]

        admitted = self.composite(md) or md
        return first_to_leave(
            admitted, of("ModelReplica"), of("InferenceCluster"), self.classes, of("ModelCache")
        )

    def coming(self, md: Obj, plan: Schedule) -> Next:
        """Where render places the replica ``plan.desired + 1`` asks for beyond ``plan``."""
        more = plan.desired + 1
        spec = {**objects.spec(md), "replicas": more}
        docs = [{**d, "spec": spec} if d is md else d for d in self.docs]
        with listening() as heard:
            render_documents(default_registry(), docs, (), api_server_admission(), simulate_stack)
        answers = [a for a in heard.of(*_identity(md), more) if a.desired == more]
        if not answers:
            return Next(short=_unscheduled(md).shortfall)
        return next_replica(plan, _as_rendered(md, answers, self.given, self.clusters))

    def composite(self, md: Obj) -> Obj | None:
        """``md`` as render left it, with the status its composer wrote."""
        kind, identity = md["kind"], _identity(md)
        same = (d for d in self.rendered if d.get("kind") == kind and _identity(d) == identity)
        return next(same, None)


def _as_rendered(
    md: Obj, answers: Sequence[Schedule], given: set[tuple[str, str]], clusters: Sequence[Obj]
) -> Schedule:
    """The last schedule render asked for, told as one decision: a replica is kept only when the
    input held it (a replica render placed in an earlier pass is placed, and says why it won
    there), and every cluster the deployment's clusterSelector kept from the scheduler is
    named, with why."""
    last = answers[-1]
    placements = _kept_if_given(last.placements, namespace_of(md), given)
    traced = _with_winning_scores(answers, placements)
    selector = _cluster_selector(md)
    unlisted = _unlisted(traced, selector, clusters)
    shortfall = tuple(_no_cluster_matches(line, selector, clusters) for line in last.shortfall)
    return dataclasses.replace(
        last,
        placements=placements,
        shortfall=shortfall,
        explain=lambda: (*traced, *unlisted),
        _trace=[],
    )


def _kept_if_given(
    placements: Sequence[ReplicaPlacement], ns: str, given: set[tuple[str, str]]
) -> tuple[ReplicaPlacement, ...]:
    """``placements``, each kept only when the input held its replica: one render placed in an
    earlier pass is placed."""
    return tuple(
        p if (ns, p.existing or "") in given else dataclasses.replace(p, existing=None)
        for p in placements
    )


def _with_winning_scores(
    answers: Sequence[Schedule], placements: Sequence[ReplicaPlacement]
) -> tuple[ClusterTrace, ...]:
    """The last answer's trace, each cluster with the scores that won it its replicas, from
    whichever pass placed them there."""
    final = {p.index: p.cluster for p in placements}
    won: dict[int, Score] = {}
    for answer in answers:
        for c in answer.trace:
            won.update((s.replica, s) for s in c.scores if final.get(s.replica) == c.cluster)
    return tuple(
        dataclasses.replace(c, scores=tuple(won[i] for i in c.indices if i in won))
        for c in answers[-1].trace
    )


def _unlisted(
    traced: Sequence[ClusterTrace], selector: dict[str, str], clusters: Sequence[Obj]
) -> tuple[ClusterTrace, ...]:
    """The input's clusters the scheduler never saw, each with why (its clusterSelector)."""
    seen = {c.cluster for c in traced}
    # When the scheduler saw no cluster at all, the shortfall names them (``none_matches``).
    return tuple(
        ClusterTrace(name, False, unselected(labels, selector) or "not listed for it")
        for name, labels in _labels(clusters).items()
        if name not in seen and traced
    )


def _cluster_selector(md: Obj) -> dict[str, str]:
    labels = objects.dig(md, "spec", "template", "spec", "clusterSelector", "matchLabels") or {}
    return {str(k): str(v) for k, v in labels.items()}


def _labels(clusters: Sequence[Obj]) -> dict[str, dict[str, str]]:
    return {
        objects.name(c): {str(k): str(v) for k, v in objects.labels(c).items()} for c in clusters
    }


def _no_cluster_matches(line: str, selector: dict[str, str], clusters: Sequence[Obj]) -> str:
    """A shortfall saying no cluster matches the clusterSelector names the clusters there are
    and what they carry for its keys (the composer lists only the matching ones)."""
    if selector and line == f"no InferenceCluster matches clusterSelector {wanted(selector)}":
        return none_matches(selector, _labels(clusters))
    return line


def _unscheduled(md: Obj) -> Schedule:
    """A deployment whose composer never asked the scheduler (it held what runs, waiting on
    something it reads): nothing placed, and render's conditions say why."""
    why = (
        "render never scheduled it: its conditions (modelplane render -o tree) say what it waits on"
    )
    return Schedule(desired=_replicas(md), placements=(), shortfall=(why,))


def _replicas(md: Obj) -> int:
    """The count the composer asks the scheduler for (within the autoscaling bounds)."""
    try:
        if objects.spec(md).get("autoscaling"):
            return max(0, desired_replicas(objects.spec(md)))
        return max(0, int(objects.dig(md, "spec", "replicas", default=1)))
    except (TypeError, ValueError, KeyError):
        return 0


def explain(docs: list[Obj]) -> str:
    """The text report for every ModelDeployment in ``docs``."""
    explanations = explain_all(docs)
    if not explanations:
        return "no ModelDeployment in the input\n"
    return "".join("\n".join(e.text()) + "\n" for e in explanations)


def explain_command(
    paths: Sequence[str], output: str = "text", deployment: str | None = None
) -> int:
    try:
        loaded = load(paths)
    except ManifestError as e:
        exits.error(COMMAND, str(e))
        return exits.UNREADABLE
    try:
        for m in loaded:
            if _ours(m.obj):
                require_name(m)
    except ManifestError as e:
        exits.error(COMMAND, str(e))
        return exits.INVALID
    objs = _admitted(loaded)
    if objs is None:
        return exits.INVALID
    explanations = _explained(loaded, objs, deployment)
    if explanations is None:
        return exits.INVALID
    _print(explanations, output)
    # A pool naming a class that does not exist is a typo to fix (1), not capacity to add (3):
    # the same verdict render gives it.
    missing = _missing_classes(loaded, objs)
    if any(e.plan.selector_errors for e in explanations) or missing:
        return exits.INVALID
    return exits.SHORT if any(e.short for e in explanations) else exits.OK


def _admitted(loaded: Sequence[Manifest]) -> list[Obj] | None:
    """Each object as admission defaults it, or None when it refuses any (each error named on
    stderr)."""
    # The same admission as render, validate and the function: explain what would be admitted.
    admission = Admission.default()
    admitted = [(m, admission.admit_input(m.obj)) for m in loaded]
    refused = [(m, a.errors) for m, a in admitted if a.errors]
    for m, errors in refused:
        for error in errors:
            exits.error(COMMAND, f"{m.where_is(error.path)}: {manifests.identity(m.obj)}: {error}")
    if refused:
        return None
    return [a.object for _, a in admitted]


def _explained(
    loaded: Sequence[Manifest], objs: Sequence[Obj], deployment: str | None
) -> list[Explanation] | None:
    """The explanation of each ModelDeployment (of ``deployment`` alone when named), or None
    when there is none to give (why, on stderr)."""
    try:
        explanations = explain_all(objs)
    except RenderError as e:
        for line in located(str(e), {manifests.identity(m.obj): m for m in loaded}):
            exits.error(COMMAND, line)
        return None
    if not explanations:
        exits.error(COMMAND, "no ModelDeployment in the input")
        return None
    if deployment is None:
        return explanations
    named = [e for e in explanations if _named(e, deployment)]
    if not named:
        exits.error(COMMAND, f"no ModelDeployment/{deployment} in the input")
        return None
    return named


def _print(explanations: Sequence[Explanation], output: str) -> None:
    if output == "json":
        print(json.dumps({"deployments": [e.to_dict() for e in explanations]}, indent=2))
    else:
        sys.stdout.write("".join("\n".join(e.text()) + "\n" for e in explanations))


def _missing_classes(loaded: Sequence[Manifest], objs: Sequence[Obj]) -> bool:
    """Name on stderr each node pool whose InferenceClass is not in the input; whether any."""
    classes = {objects.name(o) for o in objs if o.get("kind") == "InferenceClass" and _ours(o)}
    found = False
    for m, obj in zip(loaded, objs, strict=True):
        if obj.get("kind") != "InferenceCluster" or not _ours(obj):
            continue
        for i, pool in enumerate(objects.spec(obj).get("nodePools") or []):
            if pool.get("className") not in classes:
                found = True
                exits.error(
                    COMMAND,
                    f"{m.where_is(f'spec.nodePools[{i}].className')}: "
                    f"{manifests.identity(obj)}: pool {pool.get('name')} names InferenceClass "
                    f"{pool.get('className')}, which does not exist; no replica is placed there",
                )
    return found


def _ours(doc: Obj) -> bool:
    return str(doc.get("apiVersion", "")).partition("/")[0] == GROUP and doc.get("kind") in _KINDS


def _named(e: Explanation, wanted: str) -> bool:
    ns, _, name = wanted.rpartition("/")
    return e.name == name and (not ns or e.namespace == ns)


# --- building an explanation ------------------------------------------------------------------


def _explanation(md: Obj, plan: Schedule, classes: list[Obj]) -> Explanation:
    ns, name = _identity(md)
    deployment = f"{ns}/{name}"
    template = objects.dig(md, "spec", "template", "spec") or {}
    selectors = _Selectors(template, classes)
    notes = [f"invalid selector: {e}" for e in plan.selector_errors]
    if plan.scheduled < plan.desired and not plan.trace:
        notes += list(plan.shortfall)
    short = {
        line.partition(": ")[0]: line.partition(": ")[2]
        for line in (plan.shortfall if plan.scheduled < plan.desired else ())
    }
    decisions: list[Decision] = []
    views: list[ClusterView] = []
    for c in sorted(plan.trace, key=lambda c: natural(c.cluster)):
        view, rows = _cluster(deployment, c, plan.placements, selectors, short.get(c.cluster))
        views.append(view)
        decisions += rows
    return Explanation(ns, name, plan, decisions, views, notes)


def _cluster(
    deployment: str,
    c: ClusterTrace,
    placements: Sequence[ReplicaPlacement],
    selectors: _Selectors,
    full: str | None,
) -> tuple[ClusterView, list[Decision]]:
    if c.indices:
        rows, lines = _pools(deployment, c, selectors)
        scores = tuple(s.to_dict() for s in c.scores)
        # The only cluster with room needs no reason in the text (the JSON still has its terms).
        won = [f"replica {s.replica} won: {s.why}" for s in c.scores if s.contested]
        summary = _taken_summary(c, placements, full)
        return ClusterView(c.cluster, TAKEN, summary, won + lines), [
            Decision(
                deployment, c.cluster, None, TAKEN, c.reason, replicas=c.indices, scores=scores
            ),
            *rows,
        ]
    if not c.eligible:
        verdict = NOT_CONSIDERED if c.reason.startswith("not considered") else INELIGIBLE
        summary = c.reason if verdict == NOT_CONSIDERED else f"not eligible: {c.reason}"
        return ClusterView(c.cluster, verdict, summary), [
            Decision(deployment, c.cluster, None, verdict, c.reason)
        ]
    if c.reason == ROOM:
        return ClusterView(c.cluster, NOT_NEEDED, "has room, not needed"), [
            Decision(deployment, c.cluster, None, NOT_NEEDED, c.reason)
        ]
    rows, lines = _pools(deployment, c, selectors)
    extra = _uncovered(c.reason, c.pools)
    return ClusterView(c.cluster, REJECTED, f"{REJECTED}: {extra}" if extra else "", lines), [
        Decision(deployment, c.cluster, None, REJECTED, c.reason),
        *rows,
    ]


def _pools(
    deployment: str, c: ClusterTrace, selectors: _Selectors
) -> tuple[list[Decision], list[str]]:
    """A row per engine on each taken pool and per pool that could not take a replica (a pool
    merely not needed says nothing), and the text's line for each of the latter."""
    rows: list[Decision] = []
    for p in c.pools:
        if p.taken:
            rows += _engines_on(deployment, c.cluster, p)
        elif p.reason not in (POOL_ROOM, "not needed"):
            rows.append(_pool_decision(deployment, c.cluster, p.pool, p.reason, selectors))
    return rows, [f"pool {d.pool}: {_pool_text(d)}" for d in rows if d.verdict == REJECTED]


def _taken_summary(
    c: ClusterTrace, placements: Sequence[ReplicaPlacement], full: str | None
) -> str:
    """What a cluster took: its replicas, kept or placed, grouped by where they run; and why it
    has no room for another when the deployment is short."""
    phrases: dict[tuple[bool, str], list[int]] = {}
    grows = {p.pool: p.grows for p in c.pools if p.grows}
    for placed in placements:
        if placed.cluster == c.cluster:
            where = _where(placed, grows)
            phrases.setdefault((placed.retained, where), []).append(placed.index)
    parts = []
    for (kept, where), indices in phrases.items():
        which = f"{plural('replica', len(indices))} {', '.join(map(str, indices))}"
        parts.append(f"{which} {'kept' if kept else 'placed'} {where}")
    summary = "; ".join(parts)
    if full:
        summary += f"; no room for another: {full}"
    return summary


def _engines_on(deployment: str, cluster: str, p: PoolTrace) -> list[Decision]:
    """One row per engine with members on a taken pool, with the replicas it serves there."""
    uses = [(int(m["replica"]), m["engine"]) for m in _USES.finditer(p.reason)]
    return [
        Decision(
            deployment,
            cluster,
            p.pool,
            TAKEN,
            p.reason,
            engine=engine,
            replicas=tuple(r for r, e in uses if e == engine),
        )
        for engine in dict.fromkeys(e for _, e in uses)
    ]


def _where(p: ReplicaPlacement, grows: Mapping[str, tuple[int, int] | None]) -> str:
    """Where a placed replica's engines run: ``on pool a``, or per engine when several; a pool
    that must grow for it says so (``pool a (scales from 2 to 3 nodes)``)."""
    per_engine = [(e.name, list(dict.fromkeys(m.pool for m in e.members))) for e in p.engines]

    def named(pool: str) -> str:
        growth = grows.get(pool)
        return f"{pool} (scales from {growth[0]} to {growth[1]} nodes)" if growth else pool

    def pools(names: list[str]) -> str:
        return f"{plural('pool', len(names))} {', '.join(map(named, names))}"

    if len(per_engine) == 1:
        return f"on {pools(per_engine[0][1])}"
    return "(" + ", ".join(f"engine {e} on {pools(ps)}" for e, ps in per_engine) + ")"


def _pool_decision(
    deployment: str, cluster: str, pool: str, reason: str, selectors: _Selectors
) -> Decision:
    engine = member = request = selector = None
    hint = ""
    rest = reason
    if m := _MEMBER_REASON.match(reason):
        engine, member, rest = m["engine"], int(m["member"]), m["rest"]
    elif m := _ENGINE.search(reason):
        engine = m["engine"]
    if m := _REQUEST.search(rest):
        request = m["request"]
    if (no_match := _NO_MATCH.match(rest)) and engine is not None and member is not None:
        selector, hint = selectors.failing(engine, member, no_match["request"], no_match["cls"])
    return Decision(
        deployment,
        cluster,
        pool,
        REJECTED,
        reason,
        engine=engine,
        member=member,
        request=request,
        selector=selector,
        hint=hint,
    )


def _pool_text(d: Decision) -> str:
    # The scheduler's capacity reasons start with the pool's own name: the line already has it.
    text = d.reason.removeprefix(f"pool {d.pool} ")
    if d.selector:
        text += f" (selector `{d.selector}`" + (f": {d.hint})" if d.hint else ")")
    return text


def _uncovered(summary: str, pools: Sequence[Any]) -> str:
    """The parts of a cluster's reason that no pool line already says."""
    said = {p.reason for p in pools} | {f"pool {p.pool}: {p.reason}" for p in pools}
    return "; ".join(s for s in summary.split("; ") if s and s not in said)


class _Selectors:
    """Finds which selector of a request no device of a class satisfies."""

    def __init__(self, template: Obj, classes: list[Obj]) -> None:
        try:
            self.engines = parse_engines(template)
        except (TypeError, ValueError, AttributeError):
            self.engines = ()
        self.classes = {objects.name(c): c for c in classes}

    def failing(
        self, engine: str, member: int, request: str, class_name: str
    ) -> tuple[str | None, str]:
        """The selector at fault, and what the class's devices hold for what it compares."""
        wanted = self._request(engine, member, request)
        if wanted is None or not wanted.selectors:
            return None, ""
        kinds = self._kinds(class_name)
        # A selector that no device satisfies on its own is the one at fault; when each is
        # satisfied by some device but no device satisfies all, they fail together.
        alone = [s for s in wanted.selectors if not any(matches((s,), k) is True for k in kinds)]
        hint = next((h for s in alone if (h := capacity_hint(s, kinds))), "")
        return " && ".join(alone or wanted.selectors), hint

    def _request(self, engine: str, member: int, request: str) -> Request | None:
        """The request of that name of the engine's member, when the template has it."""
        found = next((e for e in self.engines if e.name == engine), None)
        if found is None or member >= len(found.members):
            return None
        return next((r for r in found.members[member].requests if r.name == request), None)

    def _kinds(self, class_name: str) -> list[DeviceKind]:
        """The class's device kinds a request may be matched against."""
        cls = self.classes.get(class_name)
        return [
            k
            for k in (device_kinds(cls) if cls is not None else ())
            if k.device_class_name or not k.claimable
        ]


# --- text ---------------------------------------------------------------------------------


def _grouped(views: list[ClusterView]) -> list[list[ClusterView]]:
    """Clusters in natural order; those sharing a verdict and reason with at least
    ``GROUP_AT - 1`` others are reported once, where the first of them stands."""
    by_key: dict[tuple[str, str, tuple[str, ...]], list[ClusterView]] = {}
    for v in views:
        if v.verdict != TAKEN:
            by_key.setdefault(v.key(), []).append(v)
    out: list[list[ClusterView]] = []
    for v in views:
        group = by_key.get(v.key(), []) if v.verdict != TAKEN else []
        if len(group) < GROUP_AT:
            out.append([v])
        elif group[0] is v:
            out.append(group)
    return out


def natural(name: str) -> tuple[Any, ...]:
    """Sort key putting eu-west-2 before eu-west-10."""
    return tuple(int(t) if i % 2 else t for i, t in enumerate(re.split(r"(\d+)", name)))


def _placement(p: ReplicaPlacement) -> Obj:
    return {
        "replica": p.index,
        "cluster": p.cluster,
        "kept": p.retained,
        "engines": [
            {
                "engine": e.name,
                "members": [
                    {"member": i, "role": m.role, "pool": m.pool} for i, m in enumerate(e.members)
                ],
            }
            for e in p.engines
        ],
    }


def _identity(obj: Obj) -> tuple[str, str]:
    return namespace_of(obj), objects.name(obj)
