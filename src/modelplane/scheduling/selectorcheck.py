"""Device selectors checked before anything is scheduled, for ``modelplane validate``.

The API server accepts any string as a selector; the scheduler (``render``) compiles it and
refuses a deployment whose selector does not compile. Validate promises to catch the same, so
it compiles every selector here, and also parses each ``quantity("...")`` literal: a malformed
one (``quantity("79 GiB")``) compiles but fails at run time on every device, which the
scheduler can only report as "no device matches".
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from modelplane.kube import objects
from modelplane.kube.errors import ErrorType, FieldError
from modelplane.kube.objects import Obj
from modelplane.kube.quantity import QuantityError, parse_quantity
from modelplane.scheduling.devices import SelectorProblem, compile_selector

# A quantity() call on one string literal, either quote.
_QUANTITY = re.compile(r"""\bquantity\s*\(\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\)""")


def selector_problems(obj: Obj) -> list[FieldError]:
    """One error per selector of a ModelDeployment or ModelReplica that cannot work."""
    errors = []
    for path, text in _selectors(obj):
        compiled = compile_selector(text)
        if isinstance(compiled, SelectorProblem):
            errors.append(FieldError(path, ErrorType.INVALID, text, compiled.message))
            continue
        for match in _QUANTITY.finditer(text):
            literal = match.group(1) if match.group(1) is not None else match.group(2)
            try:
                parse_quantity(literal)
            except QuantityError as e:
                detail = f'quantity("{literal}") is not a quantity: {e}'
                errors.append(FieldError(path, ErrorType.INVALID, text, detail))
    return errors


def _selectors(obj: Obj) -> Iterator[tuple[str, str]]:
    """Each CEL selector of the object's members' device requests, with its path."""
    kind = obj.get("kind")
    spec = objects.spec(obj)
    if kind == "ModelDeployment":
        base, requests = "spec.template.spec", "nodeSelector.devices"
        spec = objects.mapping(spec, "template", "spec")
    elif kind == "ModelReplica":
        base, requests = "spec", "deviceRequests"
    else:
        return
    for e, engine in enumerate(spec.get("engines") or []):
        for m, member in enumerate(engine.get("members") or []):
            where = f"{base}.engines[{e}].members[{m}].{requests}"
            for d, request in enumerate(objects.dig(member, *requests.split(".")) or []):
                for s, selector in enumerate(request.get("selectors") or []):
                    if selector.get("cel") is not None:
                        yield f"{where}[{d}].selectors[{s}].cel", str(selector["cel"])
