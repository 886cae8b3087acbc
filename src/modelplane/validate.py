"""``modelplane validate``: offline admission of manifests, as ``kubectl apply`` would see it.

Exit codes (``modelplane.exits``): 0 every known object is valid; 1 some object is invalid, or
no object in the input has a kind any definition serves (nothing was validated); 2 input could
not be read (a missing file, malformed YAML, a definition that does not load). Objects whose
kind no definition serves are skipped and counted on stderr. Each error line names the file
and line of the field at fault: ``<file>:<line>: <Kind> <ns>/<name>: <field error>``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, TextIO

import yaml

from modelplane import exits
from modelplane.apis import ApisNotFoundError
from modelplane.kube.admission import Admission, Admitted
from modelplane.kube.crd import Definition, DefinitionError, load_definitions
from modelplane.manifests import Manifest, ManifestError, load

EXIT_VALID = exits.OK
EXIT_INVALID = exits.INVALID
EXIT_UNREADABLE = exits.UNREADABLE
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
    return f"{body.get('kind')} {named}"


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
        documents = load(paths, stdin)
    except (InputError, ManifestError, DefinitionError, ApisNotFoundError) as e:
        exits.error(COMMAND, str(e), err)
        return exits.UNREADABLE

    errors_to = err if output == "defaulted" else out
    invalid = checked = 0
    skipped: dict[str, int] = {}
    admitted: list[Admitted] = []
    for doc in documents:
        body = doc.obj
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if not (isinstance(api_version, str) and isinstance(kind, str)):
            skipped["(no apiVersion or kind)"] = skipped.get("(no apiVersion or kind)", 0) + 1
            continue
        if not admission.knows(api_version, kind):
            if admission.knows_kind(api_version, kind):
                # The kind is ours but this version is not served: the API server refuses it.
                invalid += 1
                print(
                    f"{doc.where}: {_label(doc)}: "
                    f'no matches for kind "{kind}" in version "{api_version}"',
                    file=errors_to,
                )
            else:
                skipped[f"{kind} {api_version}"] = skipped.get(f"{kind} {api_version}", 0) + 1
            continue
        try:
            result = admission.admit(body)
        except DefinitionError as e:
            exits.error(COMMAND, str(e), err)
            return exits.UNREADABLE
        checked += 1
        admitted.append(result)
        if result.errors:
            invalid += 1
            label = _label(doc)
            for error in result.errors:
                print(f"{doc.where_is(error.path)}: {label}: {error}", file=errors_to)

    if output == "defaulted":
        out.write(
            yaml.safe_dump_all(
                [a.object for a in admitted], sort_keys=False, default_flow_style=False
            )
        )
    if not checked and not invalid:
        exits.error(COMMAND, _nothing_to_validate(len(documents), skipped), err)
        return exits.INVALID
    summary = f"{checked} checked, {invalid} invalid"
    if skipped:
        summary += f", {sum(skipped.values())} skipped (kind not defined in apis/ or by --crd)"
    print(summary, file=err)
    return exits.INVALID if invalid else exits.OK


def _nothing_to_validate(found: int, skipped: dict[str, int]) -> str:
    if not found:
        return "nothing to validate: the input holds no objects"
    kinds = ", ".join(f"{k} ({n})" if n > 1 else k for k, n in sorted(skipped.items()))
    return (
        f"nothing to validate: none of the {found} object{'s' if found != 1 else ''} in the "
        f"input has a kind defined in apis/ or by --crd (skipped: {kinds})"
    )
