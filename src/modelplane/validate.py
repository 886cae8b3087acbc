"""``modelplane validate``: offline admission of manifests, as ``kubectl apply`` would see it.

Exit codes: 0 every known object is valid, 1 some object is invalid, 2 input could not be read
(a missing file, malformed YAML, a definition that does not load). Objects whose kind no
definition serves are skipped and counted on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

import yaml

from modelplane.apis import ApisNotFoundError
from modelplane.compose.admission import Admission
from modelplane.kube.admission import Admitted
from modelplane.kube.crd import Definition, DefinitionError, load_definitions
from modelplane.manifests import Manifest, ManifestError, load, parse

EXIT_VALID = 0
EXIT_INVALID = 1
EXIT_UNREADABLE = 2


class InputError(Exception):
    """Input that cannot be read as Kubernetes manifests."""


def _read(paths: Iterable[str], stdin: TextIO) -> list[Manifest]:
    """Files, directories and ``-``; ``stdin`` stands in for standard input (tests pass one)."""
    documents: list[Manifest] = []
    for raw in paths:
        if raw == "-":
            documents += parse(stdin.read(), "<stdin>")
        else:
            documents += load([raw])
    return documents


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
    return f"{doc.source}: {body.get('kind')} {named}"


def run(
    paths: Iterable[str],
    crds: Iterable[str] = (),
    output: str = "errors",
    stdin: TextIO | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        admission = build_admission(crds)
        documents = _read(paths, stdin)
    except (InputError, ManifestError, DefinitionError, ApisNotFoundError) as e:
        print(f"error: {e}", file=err)
        return EXIT_UNREADABLE

    errors_to = err if output == "defaulted" else out
    invalid = checked = skipped = 0
    admitted: list[Admitted] = []
    for doc in documents:
        body = doc.obj
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if not (isinstance(api_version, str) and isinstance(kind, str)):
            skipped += 1
            continue
        if not admission.knows(api_version, kind):
            if admission.knows_kind(api_version, kind):
                # The kind is ours but this version is not served: the API server refuses it.
                invalid += 1
                print(
                    f'{_label(doc)}: no matches for kind "{kind}" in version "{api_version}"',
                    file=errors_to,
                )
            else:
                skipped += 1
            continue
        try:
            result = admission.admit(body)
        except DefinitionError as e:
            print(f"error: {e}", file=err)
            return EXIT_UNREADABLE
        checked += 1
        admitted.append(result)
        if result.errors:
            invalid += 1
            label = _label(doc)
            for error in result.errors:
                print(f"{label}: {error}", file=errors_to)

    if output == "defaulted":
        out.write(
            yaml.safe_dump_all(
                [a.object for a in admitted], sort_keys=False, default_flow_style=False
            )
        )
    summary = f"{checked} checked, {invalid} invalid"
    if skipped:
        summary += f", {skipped} skipped (kind not defined in apis/ or by --crd)"
    print(summary, file=err)
    return EXIT_INVALID if invalid else EXIT_VALID
