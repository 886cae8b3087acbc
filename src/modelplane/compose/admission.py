"""One admission for every command and for the function: the API server's, then the composers'.

``Admission`` runs the API server's admission of the shipped XRDs (``kube.admission``: pruning,
defaults, the structural schema, every CEL rule), then, on an object the API server accepts,
the checks a composer makes that no XRD rule can: Crossplane drops root-level XRD rules, so
name lengths cannot be refused there; a Standalone ModelReplica member without
``template.spec`` fits the schema but has nothing to run; a ModelDeployment is composable only
if the ModelReplicas it stamps are. ``validate`` reports exactly what ``render`` and ``explain``
refuse and what the function answers Fatal.

An object admitted may carry warnings (``Admitted.warnings``, ``path: message``), as the API
server answers with warnings beside an object it accepts: a gang whose engines are never told
their leader's address or their rank (``modelreplica/wiring.py``); an engine whose parallelism
flags disagree with the GPUs it claims (``modelreplica/parallelism.py``); an llm-d endpoint picker
image whose tag names no release, so its age cannot be checked (``modelreplica/picker.py``).
``validate`` prints them; the ModelReplica composer reports the same as Warning events.

It also gives the function the schema each required or observed resource is read against
(``read_schema``): the XRD's for this project's kinds, and for anything else (the composed
provider-kubernetes Objects) the few fields composers read of every object.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from modelplane.compose.modelreplica.parallelism import parallelism_warnings
from modelplane.compose.modelreplica.picker import image_warnings, serving_problem
from modelplane.compose.modelreplica.shape import problem as replica_problem
from modelplane.compose.modelreplica.wiring import gang_warnings
from modelplane.kube import admission as api
from modelplane.kube.admission import Admitted, subdomain_errors
from modelplane.kube.crd import Definition, Version, load_definitions
from modelplane.kube.errors import OMIT, ErrorType, FieldError
from modelplane.kube.names import LABEL_VALUE_MAX
from modelplane.kube.objects import Obj
from modelplane.kube.schema import Schema

Check = Callable[[Obj], list[FieldError]]

GROUP = "modelplane.ai"
UnknownKindError = api.UnknownKindError


class Admission:
    """The API server's admission of every loaded definition, then each kind's own checks."""

    def __init__(
        self,
        definitions: Iterable[Definition] = (),
        checks: Mapping[tuple[str, str], Check] | None = None,
    ) -> None:
        self.server = api.Admission(definitions)
        self.checks = dict(CHECKS if checks is None else checks)

    @classmethod
    def from_paths(cls, paths: Iterable[Path | str]) -> Admission:
        return cls(load_definitions(Path(p) for p in paths))

    @classmethod
    @functools.cache
    def default(cls) -> Admission:
        """The shipped XRDs (``apis/``), compiled once per process."""
        return cls(api.Admission.default().definitions())

    def add(self, definitions: Iterable[Definition]) -> Admission:
        """A new Admission with these definitions too (they win on a clash)."""
        return Admission([*self.definitions(), *definitions], self.checks)

    def definitions(self) -> list[Definition]:
        return self.server.definitions()

    def version(self, api_version: str, kind: str) -> Version | None:
        return self.server.version(api_version, kind)

    def knows(self, api_version: str, kind: str) -> bool:
        return self.server.knows(api_version, kind)

    def unmatched(self, api_version: str, kind: str) -> FieldError | None:
        """Why no definition serves this object when one should, or None: a kind of ours in a
        version not served (``no matches for kind``, as kubectl says), or a kind our group does
        not define (a typo: with the nearest kind it does). Other groups' kinds are not ours to
        judge, so they pass."""
        if self.knows(api_version, kind):
            return None
        group = _group(api_version)
        if self.server.knows_kind(api_version, kind):
            served = sorted(
                f"{d.group}/{v.name}"
                for d in self.definitions()
                if (d.group, d.kind) == (group, kind)
                for v in d.versions.values()
                if v.served
            )
            detail = f'no matches for kind "{kind}" in version "{api_version}"'
            detail += f" (served: {', '.join(served)})" if served else ""
            return FieldError("apiVersion", ErrorType.INVALID, api_version, detail)
        if group != GROUP:
            return None
        ours = sorted({d.kind for d in self.definitions() if d.group == GROUP})
        near = difflib.get_close_matches(kind, ours, n=1, cutoff=0.6)
        detail = f"not a kind of group {GROUP}" + (
            f'; did you mean "{near[0]}"?' if near else f" (its kinds: {', '.join(ours)})"
        )
        return FieldError("kind", ErrorType.INVALID, kind, detail)

    def admit(self, obj: Obj) -> Admitted:
        """The pruned, defaulted object and every error: the API server's, or, when it accepts
        the object, the composer's. Raises ``UnknownKindError`` for kinds it does not serve."""
        admitted = self.server.admit(obj)
        if admitted.errors:
            return admitted
        kind = (_group(str(obj.get("apiVersion", ""))), str(obj.get("kind")))
        check = self.checks.get(kind)
        if check is None:
            return admitted
        errors = check(admitted.object)
        # Warnings only of an object admitted: they read fields the errors may say are wrong.
        warn = WARNINGS.get(kind)
        warnings = warn(admitted.object) if warn and not errors else []
        return Admitted(admitted.object, errors, warnings)

    def admit_input(self, obj: Obj) -> Admitted:
        """An input as the commands read it: composites have a status subresource, which the
        API server ignores on create and update (compositions write it), so only the rest is
        admitted; a status given in the input is observed state, kept as it is. Objects of
        kinds no definition serves pass unchanged, unless they claim our group (``unmatched``):
        render would otherwise drop a misspelled kind, or an unserved version, silently."""
        api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        if not self.knows(api_version, kind):
            problem = self.unmatched(api_version, kind)
            return Admitted(copy.deepcopy(obj), [problem] if problem else [])
        admitted = self.admit({k: v for k, v in obj.items() if k != "status"})
        if "status" in obj:
            admitted.object["status"] = copy.deepcopy(obj["status"])
        return admitted

    def read_schema(self, api_version: str, kind: str) -> Schema:
        """The schema a required or observed resource of this kind is read against."""
        version = self.version(api_version, kind)
        if version is None:
            return _compiled("object")
        return _with_metadata(version.schema())


def invalid(kind: str, api_version: str, name: str, errors: list[FieldError]) -> str:
    """The API server's message for an object it refuses (apimachinery's ``NewInvalid``)."""
    group = _group(api_version)
    qualified = f"{kind}.{group}" if group else kind
    listed = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]"
    return f'{qualified} "{name}" is invalid: {listed}'


# --- each kind's own checks -------------------------------------------------------------------


def _replica(replica: Obj) -> list[FieldError]:
    found = replica_problem(replica) or serving_problem(replica["spec"].get("serving"))
    if found:
        return [field_error(found)]
    errors: list[FieldError] = []
    for e, engine in enumerate(replica["spec"]["engines"]):
        for m, member in enumerate(engine["members"]):
            for r, request in enumerate(member.get("deviceRequests") or ()):
                path = f"spec.engines[{e}].members[{m}].deviceRequests[{r}].deviceClassName"
                errors += subdomain_errors(path, str(request["deviceClassName"]))
    return errors


def _class(inference_class: Obj) -> list[FieldError]:
    # The name is stamped into every ResourceClaimTemplate of a replica placed on the class,
    # which the API server would refuse: a DeviceClass is named by a DNS subdomain.
    errors: list[FieldError] = []
    for d, device in enumerate(inference_class["spec"].get("devices") or ()):
        if device.get("deviceClassName"):
            path = f"spec.devices[{d}].deviceClassName"
            errors += subdomain_errors(path, str(device["deviceClassName"]))
    return errors


def _deployment(md: Obj) -> list[FieldError]:
    errors = _label_value_name(md, "every ModelReplica it places carries it as a label value")
    spec = md["spec"]["template"]["spec"]
    # The replica the deployment would stamp, on placeholder pools: what the ModelReplica
    # composer would refuse of it is refused here, at the template's own paths.
    engines = [
        {
            **engine,
            "members": [
                {**{k: v for k, v in m.items() if k != "nodeSelector"}, "nodePoolName": "pool"}
                for m in engine["members"]
            ],
        }
        for engine in spec["engines"]
    ]
    stamped = {k: spec[k] for k in ("modelCacheRef", "serving") if k in spec}
    replica = {
        "metadata": md["metadata"],
        "spec": {"clusterName": "cluster", **stamped, "engines": engines},
    }
    found = replica_problem(replica) or serving_problem(stamped.get("serving"))
    if found:
        errors.append(field_error("spec.template." + found))
    return errors


def _cluster(cluster: Obj) -> list[FieldError]:
    return _label_value_name(cluster, "every replica placed on it carries it as a label value")


def _label_value_name(obj: Obj, why: str) -> list[FieldError]:
    name = str(obj["metadata"].get("name") or "")
    if len(name) <= LABEL_VALUE_MAX:
        return []
    detail = f"must be no more than {LABEL_VALUE_MAX} characters: {why}"
    return [FieldError("metadata.name", ErrorType.INVALID, name, detail)]


CHECKS: dict[tuple[str, str], Check] = {
    (GROUP, "ModelReplica"): _replica,
    (GROUP, "ModelDeployment"): _deployment,
    (GROUP, "InferenceCluster"): _cluster,
    (GROUP, "InferenceClass"): _class,
}


def _replica_warnings(replica: Obj) -> list[str]:
    spec = replica["spec"]
    return (
        gang_warnings(spec["engines"])
        + parallelism_warnings(spec["engines"])
        + image_warnings(spec.get("serving"))
    )


def _deployment_warnings(md: Obj) -> list[str]:
    spec, at = md["spec"]["template"]["spec"], "spec.template.spec"
    return gang_warnings(spec["engines"], at=at) + image_warnings(spec.get("serving"), at=at)


WARNINGS: dict[tuple[str, str], Callable[[Obj], list[str]]] = {
    (GROUP, "ModelReplica"): _replica_warnings,
    (GROUP, "ModelDeployment"): _deployment_warnings,
}
"""What is admitted but will not work as the user surely means it, as ``path: message``."""


def field_error(problem: str) -> FieldError:
    """A composer's ``path: Type: detail`` problem as the FieldError that prints the same."""
    path, _, rest = problem.partition(": ")
    for kind in (ErrorType.REQUIRED, ErrorType.INVALID, ErrorType.DUPLICATE, ErrorType.FORBIDDEN):
        text = kind.text
        if rest == text or rest.startswith(text + ": "):
            return FieldError(path, kind, OMIT, rest[len(text) + 2 :])
    return FieldError(path, ErrorType.INVALID, OMIT, rest)


# --- what a required or observed resource is read against -------------------------------------

_STRING = {"type": "string"}
_STRINGS = {"type": "object", "additionalProperties": _STRING}
_METADATA = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": _STRING,
        "generateName": _STRING,
        "namespace": _STRING,
        "labels": _STRINGS,
        "annotations": _STRINGS,
        "creationTimestamp": _STRING,
    },
}
_CONDITIONS = {
    "type": "array",
    "items": {
        "type": "object",
        "properties": {k: _STRING for k in ("type", "status", "reason", "message")},
    },
}
# What composers read of any composed object: its identity, its conditions, and, on a
# provider-kubernetes Object, the remote object's status fields readiness is read from.
_ANY_OBJECT = {
    "type": "object",
    "properties": {
        "apiVersion": _STRING,
        "kind": _STRING,
        "metadata": _METADATA,
        "spec": {"type": "object"},
        "status": {
            "type": "object",
            "properties": {
                "conditions": _CONDITIONS,
                "atProvider": {
                    "type": "object",
                    "properties": {
                        "manifest": {
                            "type": "object",
                            "properties": {
                                "apiVersion": _STRING,
                                "kind": _STRING,
                                "metadata": {"type": "object"},
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "readyReplicas": {"type": "integer"},
                                        "availableReplicas": {"type": "integer"},
                                        "conditions": _CONDITIONS,
                                        "addresses": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "properties": {"value": _STRING},
                                            },
                                        },
                                    },
                                },
                            },
                        }
                    },
                },
            },
        },
    },
}


@functools.cache
def _compiled(name: str) -> Schema:
    return Schema.of({"metadata": _METADATA, "object": _ANY_OBJECT}[name])


@functools.cache
def _with_metadata(root: Schema) -> Schema:
    # An XRD's schema declares metadata as a bare object; read it as the API server stores it.
    return dataclasses.replace(
        root, properties={**(root.properties or {}), "metadata": _compiled("metadata")}
    )


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]
