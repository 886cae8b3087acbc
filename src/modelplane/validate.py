"""``modelplane validate``: offline admission of manifests, as ``kubectl apply`` would see it.

Exit codes (``modelplane.exits``): 0 every known object is valid; 1 some object is invalid, or
no object in the input has a kind any definition serves (nothing was validated); 2 input could
not be read (a missing file, malformed YAML, a definition that does not load). Objects whose
kind no definition serves are skipped, each named on stderr, unless their group is ours
(``modelplane.ai``): an unserved version or an undefined kind there is an error, with the
nearest kind. Device selectors are compiled and their ``quantity()`` literals parsed, as render
would. Each error line names the file and line of the field at fault:
``<file>:<line>: <Kind> <ns>/<name>: <field error>``. What is valid but will not work as meant
(a gang never told its leader's address) is a warning on stderr,
``<file>:<line>: <Kind> <ns>/<name>: Warning: <path>: <message>``, and exits 0.

Every definition in play (``apis/`` and each ``--crd``) is also held to the API server's CEL
cost budget (``modelplane.kube.cel.budget``): one the API server would refuse to create is reported
with the API server's errors and the run exits 1. ``run_definitions`` (``--definitions``)
reports the budget of every definition the project ships.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

import yaml

from modelplane import exits
from modelplane.apis import ApisNotFoundError
from modelplane.compose.admission import Admission
from modelplane.kube.admission import Admitted
from modelplane.kube.cel.budget import (
    STATIC_ESTIMATED_COST_LIMIT,
    STATIC_ESTIMATED_CRD_COST_LIMIT,
    CostError,
    DefinitionCost,
    estimate_cached,
)
from modelplane.kube.crd import Definition, DefinitionError, load_definitions
from modelplane.manifests import Manifest, ManifestError, load
from modelplane.scheduling.selectorcheck import selector_problems
from modelplane.shortlist import counted

COMMAND = "validate"


class InputError(Exception):
    """Input that cannot be read as Kubernetes manifests."""


def build_admission(crds: Iterable[str]) -> Admission:
    """The project's definitions plus every ``--crd``, each compiled now (bad rules fail here)."""
    extra: list[Definition] = []
    for raw in crds:
        path = Path(raw)
        if not path.exists():
            raise InputError(f"--crd {raw}: no such file or directory")
        found = load_definitions([path])
        if not found:
            raise InputError(f"--crd {raw}: no CustomResourceDefinition or XRD found")
        for definition in found:
            definition.compile()
        extra.extend(found)
    try:
        base = Admission.default()
    except ApisNotFoundError:
        if not extra:
            raise
        base = Admission([])
    return base.add(extra) if extra else base


def _label(doc: Manifest) -> str:
    body = doc.obj
    meta = body["metadata"] if isinstance(body.get("metadata"), dict) else {}
    name = meta.get("name") or meta.get("generateName") or "<unnamed>"
    namespace = meta.get("namespace")
    named = f"{namespace}/{name}" if namespace else str(name)
    return f"{body.get('kind')}/{named}"  # as every command names an object


@dataclass
class _Tally:
    """What checking the documents found: the counts the summary line gives, and more."""

    checked: int = 0
    invalid: int = 0
    warned: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_lines: list[str] = field(default_factory=list)
    """Each skipped object named, unless nothing was validated (one line says so)."""
    admitted: list[Admitted] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def run(
    paths: Iterable[str],
    crds: Iterable[str] = (),
    output: str = "errors",
    stdin: BinaryIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        admission = build_admission(crds)
        costs = [estimate_cached(d) for d in admission.definitions()]
        documents = load(paths, stdin)
    except (InputError, ManifestError, DefinitionError, ApisNotFoundError, CostError) as e:
        exits.error(COMMAND, str(e), err)
        return exits.UNREADABLE

    errors_to = err if output == "defaulted" else out
    refused = _print_refused(costs, errors_to)
    tally = _Tally()
    try:
        for doc in documents:
            _check(doc, admission, tally, errors_to, err)
    except DefinitionError as e:
        exits.error(COMMAND, str(e), err)
        return exits.UNREADABLE

    if output == "defaulted":
        admitted = [a.object for a in tally.admitted]
        out.write(yaml.safe_dump_all(admitted, sort_keys=False, default_flow_style=False))
    return _conclude(tally, refused, len(documents), err)


def _conclude(tally: _Tally, refused: int, found: int, err: TextIO) -> int:
    """The closing lines on stderr, and the exit code."""
    if not tally.checked and not tally.invalid and not refused:
        exits.error(COMMAND, _nothing_to_validate(found, tally.skipped), err)
        return exits.INVALID
    for line in tally.skipped_lines:
        print(line, file=err)
    print(_summary(tally, refused), file=err)
    return exits.INVALID if tally.invalid or refused else exits.OK


def _check(
    doc: Manifest, admission: Admission, tally: _Tally, errors_to: TextIO, err: TextIO
) -> None:
    """Admit one document, or skip it, counting either in ``tally``."""
    body = doc.obj
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if not (isinstance(api_version, str) and isinstance(kind, str)):
        tally.skip("(no apiVersion or kind)")
    elif not admission.knows(api_version, kind):
        _check_unknown(doc, admission, api_version, kind, tally, errors_to)
    else:
        _admit(doc, admission, tally, errors_to, err)


def _check_unknown(
    doc: Manifest,
    admission: Admission,
    api_version: str,
    kind: str,
    tally: _Tally,
    errors_to: TextIO,
) -> None:
    # Ours in a version not served, or a kind our group does not define: refused as
    # the API server would (render refuses the same). Anyone else's is skipped, by name.
    problem = admission.unmatched(api_version, kind)
    if problem is not None:
        tally.invalid += 1
        print(f"{doc.where_is(problem.path)}: {_label(doc)}: {problem}", file=errors_to)
    else:
        tally.skip(f"{kind} {api_version}")
        tally.skipped_lines.append(f"{doc.where}: {_label(doc)}: skipped: {_UNDEFINED}")


def _admit(
    doc: Manifest, admission: Admission, tally: _Tally, errors_to: TextIO, err: TextIO
) -> None:
    """Admit a document of a known kind; print its warnings and errors. A definition that
    fails while admitting raises DefinitionError."""
    result = admission.admit(doc.obj)
    tally.checked += 1
    tally.admitted.append(result)
    tally.warned += _print_warnings(doc, result.warnings, err)
    if not result.errors:
        # What admission cannot see and render would refuse: selectors that do not compile,
        # quantity() literals that do not parse.
        result.errors.extend(selector_problems(result.object))
    if result.errors:
        tally.invalid += 1
        label = _label(doc)
        for error in result.errors:
            print(f"{doc.where_is(error.path)}: {label}: {error}", file=errors_to)


_UNDEFINED = "kind not defined in apis/ or by --crd"


def _summary(tally: _Tally, refused: int) -> str:
    summary = f"{tally.checked} checked, {tally.invalid} invalid"
    if tally.warned:
        summary += f", {counted(tally.warned, 'warning')}"
    skipped = sum(tally.skipped.values())
    if skipped:
        summary += f", {skipped} skipped ({_UNDEFINED})"
    if refused:
        summary += f", {refused} definitions over the CEL cost budget"
    return summary


def _print_warnings(doc: Manifest, warnings: list[str], to: TextIO) -> int:
    """Each warning at the line of its field, on stderr as kubectl prints the API server's."""
    for warning in warnings:
        path = warning.partition(": ")[0]
        print(f"{doc.where_is(path)}: {_label(doc)}: Warning: {warning}", file=to)
    return len(warnings)


def _nothing_to_validate(found: int, skipped: dict[str, int]) -> str:
    if not found:
        return "nothing to validate: the input holds no objects"
    kinds = ", ".join(f"{k} ({n})" if n > 1 else k for k, n in sorted(skipped.items()))
    return (
        f"nothing to validate: none of the {counted(found, 'object')} in the "
        f"input has a kind defined in apis/ or by --crd (skipped: {kinds})"
    )


def _definition_label(cost: DefinitionCost) -> str:
    return f"{cost.source}: {cost.kind}/{cost.name}"  # as every command names an object


def _print_refused(costs: Iterable[DefinitionCost], to: TextIO) -> int:
    """Print the API server's errors for each definition it would refuse; how many."""
    refused = [cost for cost in costs if cost.refused]
    for cost in refused:
        for error in cost.errors:
            print(f"{_definition_label(cost)}: {error}", file=to)
    return len(refused)


def _short(path: str, schema_path: str) -> str:
    """A path below a version's schema, from ``openAPIV3Schema`` on."""
    if path.startswith(schema_path):
        return "openAPIV3Schema" + path[len(schema_path) :]
    return path


def run_definitions(crds: Iterable[str] = (), top: int = 3) -> int:
    """``--definitions``: every shipped definition (and each ``--crd``) against the CEL cost
    budget: each version's total and its costliest rules. Exit 1 when any would be refused."""
    try:
        costs = [estimate_cached(d) for d in build_admission(crds).definitions()]
    except (InputError, DefinitionError, ApisNotFoundError, CostError) as e:
        exits.error(COMMAND, str(e))
        return exits.UNREADABLE
    for cost in costs:
        print(_definition_label(cost))
        for schema in cost.schemas:
            share = 100 * schema.total / STATIC_ESTIMATED_CRD_COST_LIMIT
            print(
                f"  {schema.version}: {len(schema.expressions)} expressions, estimated total "
                f"{schema.total:,} ({share:.2f}% of {STATIC_ESTIMATED_CRD_COST_LIMIT:,})"
            )
            for x in schema.costliest(top):
                if not x.total:
                    continue
                per_rule = 100 * x.total / STATIC_ESTIMATED_COST_LIMIT
                where = _short(x.path, schema.path)
                print(
                    f"    {x.total:,} = {x.cost:,} x {x.cardinality:,} "
                    f"({per_rule:.2f}% of {STATIC_ESTIMATED_COST_LIMIT:,}) {where}"
                )
                if x.unbounded:
                    shown = ", ".join(_short(u, schema.path) for u in x.unbounded)
                    print(f"      sized from the 3 MiB request limit: {shown}")
        for error in cost.errors:
            print(f"  {error}")
    refused = sum(c.refused for c in costs)
    print(f"{len(costs)} definitions, {refused} over the CEL cost budget", file=sys.stderr)
    return exits.INVALID if refused else exits.OK
