"""The CEL cost budget a definition must meet before the API server creates it.

When a CustomResourceDefinition is created (and so when Crossplane creates the CRD of an XRD),
apiextensions validation (``pkg/apis/apiextensions/validation``) estimates every
``x-kubernetes-validations`` rule and refuses the definition when

- one rule's cost, times how often the rule can run in one object, exceeds
  ``STATIC_ESTIMATED_COST_LIMIT`` (10,000,000): ``<path>.x-kubernetes-validations[i].rule:
  Forbidden: estimated rule cost exceeds budget by factor of ...``; a ``messageExpression``
  counts on its own, once;
- the sum over one version's schema exceeds ``STATIC_ESTIMATED_CRD_COST_LIMIT``
  (100,000,000): the four costliest rules (those over 1% of the limit) are named, then
  ``<schema>: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3
  schema exceeds budget by factor of ...``.

How often a rule can run (its cardinality) is the product of ``maxItems``/``maxProperties`` of
the lists and maps above it; under any list or map without one, it is how many copies of the
rule's node (at its smallest JSON size, plus a comma) fit in 3 MiB.

``estimate_definition(definition)`` returns a ``DefinitionCost`` per definition: every rule's
cost, each version's total, and the API server's error lines (empty when the definition would be
created). A rule the estimator cannot cost raises ``CostError`` naming it; it never guesses low.
(``PER_CALL_LIMIT`` is the runtime limit of one evaluation, 1,000,000; creation checks the
static limits above.)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelplane.kube.cel.check import CheckError, check, decl_type, optional_of
from modelplane.kube.cel.decl import Decl, decl_of, max_cardinality
from modelplane.kube.cel.estimate import MAX_UINT64, estimate_detail
from modelplane.kube.cel.syntax import ParseError, parse
from modelplane.kube.crd import Definition

STATIC_ESTIMATED_COST_LIMIT = 10_000_000
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
PER_CALL_LIMIT = 1_000_000
_MOST_EXPENSIVE = 4

__all__ = [
    "PER_CALL_LIMIT",
    "STATIC_ESTIMATED_COST_LIMIT",
    "STATIC_ESTIMATED_CRD_COST_LIMIT",
    "CostError",
    "DefinitionCost",
    "ExpressionCost",
    "SchemaCost",
    "cost_message",
    "estimate_cached",
    "estimate_definition",
    "estimate_rule",
    "estimate_schema",
]


class CostError(ValueError):
    """A rule whose cost cannot be estimated here (named in the message)."""


@dataclass
class ExpressionCost:
    """One rule or messageExpression: ``cost`` per evaluation, ``cardinality`` evaluations at
    most per object, ``total`` what counts against the budgets."""

    path: str
    cost: int
    cardinality: int
    total: int
    # What the estimate sized from the 3 MiB request limit, the schema setting no bound: values
    # the expression reads (``self.labels[*]``) and the list or map above it (schema paths).
    unbounded: tuple[str, ...] = ()


@dataclass
class SchemaCost:
    """One version's schema: its expressions, their sum, and the API server's errors."""

    path: str
    version: str
    expressions: list[ExpressionCost] = field(default_factory=list)
    total: int = 0
    errors: list[str] = field(default_factory=list)

    def costliest(self, n: int) -> list[ExpressionCost]:
        return sorted(self.expressions, key=lambda x: -x.total)[:n]


@dataclass
class DefinitionCost:
    name: str
    kind: str
    source: str
    schemas: list[SchemaCost]

    @property
    def errors(self) -> list[str]:
        return [e for s in self.schemas for e in s.errors]

    @property
    def refused(self) -> bool:
        return any(s.errors for s in self.schemas)


def cost_message(name: str, cost: int, limit: int) -> str:
    """apiextensions' getCostErrorMessage."""
    factor = cost / limit
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {shown} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def _times(cost: int, cardinality: int) -> int:
    return min(cost * cardinality, MAX_UINT64)


def estimate_rule(expression: str, schema: dict[str, Any]) -> int:
    """The estimated cost of one evaluation of ``expression`` on a node with ``schema`` (cel-go's
    ``CostEstimate.Max``, before cardinality). Raises ``CostError``."""
    decl = decl_of(schema)
    if decl is None:
        raise CostError("the schema under the rule has no CEL type")
    return _estimate(expression, decl, optional_old_self=False)[0]


def _estimate(expression: str, decl: Decl, optional_old_self: bool) -> tuple[int, list[str]]:
    self_type = decl_type(decl)
    variables = {
        "self": self_type,
        "oldSelf": optional_of(self_type) if optional_old_self else self_type,
    }
    try:
        tree = parse(expression)
        return estimate_detail(tree, check(tree, variables), decl)
    except (ParseError, CheckError) as e:
        raise CostError(f"cannot estimate the cost of {expression.strip()!r}: {e}") from None


def estimate_schema(schema: dict[str, Any], path: str, version: str = "") -> SchemaCost:
    """Every rule of one ``openAPIV3Schema`` against the budgets, as the API server checks it."""
    result = SchemaCost(path, version)
    _walk(schema, path, 1, None, True, result)
    if result.total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        for x in result.costliest(_MOST_EXPENSIVE):
            if x.total >= STATIC_ESTIMATED_CRD_COST_LIMIT // 100:
                result.errors.append(
                    f"{x.path}: Forbidden: contributed to estimated rule cost total exceeding "
                    "cost limit for entire OpenAPIv3 schema"
                )
        what = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        message = cost_message(what, result.total, STATIC_ESTIMATED_CRD_COST_LIMIT)
        result.errors.append(f"{path}: Forbidden: {message}")
    return result


def _walk(
    schema: Any,
    path: str,
    cardinality: int | None,
    unbounded_at: str | None,
    root: bool,
    result: SchemaCost,
) -> None:
    """``unbounded_at``: the list or map above without maxItems/maxProperties, if any."""
    if not isinstance(schema, dict):
        return
    rules = [r for r in schema.get("x-kubernetes-validations") or () if isinstance(r, dict)]
    if rules:
        _rules(schema, rules, path, cardinality, unbounded_at, root, result)
    factor = _max_elements(schema)
    below = None if cardinality is None or factor is None else _times(cardinality, factor)
    if factor is None and unbounded_at is None:
        unbounded_at = path
    for sub, sub_path in _subschemas(schema, path):
        _walk(sub, sub_path, below, unbounded_at, False, result)


def _subschemas(schema: dict[str, Any], path: str) -> Iterator[tuple[Any, str]]:
    """The schemas under additionalProperties, properties and items, each with its path."""
    additional = schema.get("additionalProperties")
    if isinstance(additional, dict):
        yield additional, f"{path}.additionalProperties"
    for name, prop in (schema.get("properties") or {}).items():
        yield prop, f"{path}.properties[{name}]"
    items = schema.get("items")
    if isinstance(items, dict):
        yield items, f"{path}.items"
    elif isinstance(items, list):
        for i, item in enumerate(items):
            yield item, f"{path}.items[{i}]"


def _rules(
    schema: dict[str, Any],
    rules: list[dict[str, Any]],
    path: str,
    cardinality: int | None,
    unbounded_at: str | None,
    root: bool,
    result: SchemaCost,
) -> None:
    decl = decl_of(schema, root)
    if decl is None:
        raise CostError(f"{path}.x-kubernetes-validations: the schema here has no CEL type")
    times = cardinality if cardinality is not None else max_cardinality(decl.min_size)
    for i, raw in enumerate(rules):
        where = f"{path}.x-kubernetes-validations[{i}]"
        optional_old_self = bool(raw.get("optionalOldSelf"))
        # The API server counts a messageExpression once, whatever the rule's cardinality, so
        # only the rule's cost grows with a list or map above left unbounded.
        for key, count in (("rule", times), ("messageExpression", 1)):
            source = str(raw.get(key) or "")
            if not source.strip():
                continue
            try:
                cost, unbounded = _estimate(source, decl, optional_old_self)
            except CostError as e:
                raise CostError(f"{where}.{key}: {e}") from None
            total = _times(cost, count)
            if total > STATIC_ESTIMATED_COST_LIMIT:
                message = cost_message(f"estimated {key} cost", total, STATIC_ESTIMATED_COST_LIMIT)
                result.errors.append(f"{where}.{key}: Forbidden: {message}")
            if key == "rule" and unbounded_at is not None:
                unbounded.append(unbounded_at)
            result.expressions.append(
                ExpressionCost(f"{where}.{key}", cost, count, total, tuple(unbounded))
            )
            result.total = min(result.total + total, MAX_UINT64)


def _max_elements(schema: dict[str, Any]) -> int | None:
    """How many children each value of ``schema`` can hold (None: unbounded)."""
    kind = schema.get("type")
    if kind == "object" and "additionalProperties" in schema:
        bound = schema.get("maxProperties")
    elif kind == "array":
        bound = schema.get("maxItems")
    else:
        return 1
    return None if bound is None else max(int(bound), 0)


def estimate_definition(definition: Definition) -> DefinitionCost:
    """Every version's schema of ``definition`` (an XRD as the CRD Crossplane generates)."""
    schemas = [
        estimate_schema(
            version.raw_schema, f"spec.versions[{i}].schema.openAPIV3Schema", version.name
        )
        for i, version in enumerate(definition.versions.values())
    ]
    name = f"{definition.plural}.{definition.group}"
    return DefinitionCost(name, definition.kind_of_definition, definition.source, schemas)


# Loaded definitions are shared per file version (modelplane.kube.crd), so their estimates are
# too: every `modelplane validate` in a process checks apis/ once. The definition is kept with
# its estimate so that its id cannot be handed on.
_ESTIMATES: dict[int, tuple[Definition, DefinitionCost]] = {}


def estimate_cached(definition: Definition) -> DefinitionCost:
    """``estimate_definition``, once per loaded definition, and across processes once per
    definition content and estimator (``_stored``)."""
    found = _ESTIMATES.get(id(definition))
    if found is None or found[0] is not definition:
        found = (definition, _stored(definition))
        _ESTIMATES[id(definition)] = found
    return found[1]


# Estimating the shipped XRDs takes longer than all the rest of `modelplane validate`, and gives
# the same answer every run: keep answers on disk, keyed by the definition's content and the
# estimator's own source, so an edited definition or estimator is estimated afresh.
_ESTIMATOR = ("budget.py", "estimate.py", "check.py", "decl.py", "syntax.py")


def _stored(definition: Definition) -> DefinitionCost:
    folder = _cache_dir()
    if folder is None:
        return estimate_definition(definition)
    path = folder / f"{_content_key(definition)}.json"
    try:
        return _from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    cost = estimate_definition(definition)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(dataclasses.asdict(cost)))
        partial.replace(path)
    except OSError:
        pass  # a read-only home still validates, only slower
    return cost


def _cache_dir() -> Path | None:
    """``$MODELPLANE_CACHE_DIR``, else ``$XDG_CACHE_HOME/modelplane``, else
    ``~/.cache/modelplane``; ``MODELPLANE_CACHE_DIR=`` (empty) turns the cache off."""
    explicit = os.environ.get("MODELPLANE_CACHE_DIR")
    if explicit is not None:
        return Path(explicit) / "cel-cost" if explicit else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "modelplane" / "cel-cost"


@functools.lru_cache(maxsize=1)
def _estimator_digest() -> str:
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for name in _ESTIMATOR:
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


def _content_key(definition: Definition) -> str:
    content = {
        "estimator": _estimator_digest(),
        "name": f"{definition.plural}.{definition.group}",
        "kind": definition.kind_of_definition,
        "source": definition.source,
        "versions": [(v.name, v.raw_schema) for v in definition.versions.values()],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def _from_json(data: dict[str, Any]) -> DefinitionCost:
    schemas = [
        SchemaCost(
            s["path"],
            s["version"],
            [ExpressionCost(**{**x, "unbounded": tuple(x["unbounded"])}) for x in s["expressions"]],
            s["total"],
            list(s["errors"]),
        )
        for s in data["schemas"]
    ]
    return DefinitionCost(data["name"], data["kind"], data["source"], schemas)
