"""The InferenceClass composition: data only, so it composes nothing and says what it describes.

A Composition exists anyway so Crossplane reconciles the class (an XR without one reports a
missing Composition forever) and ``kubectl get icl`` shows it accepted.
"""

from __future__ import annotations

from modelplane.composer import Condition, Inputs, Result
from modelplane.kube import objects
from modelplane.reasons import InferenceClass


def compose_class(inputs: Inputs) -> Result:
    devices = objects.spec(inputs.composite).get("devices") or []
    summary = ", ".join(
        f"{d.get('name')} x{d.get('count', 1)} per node ({d.get('claim') or 'DRA'})"
        for d in devices
    )
    return Result(
        conditions=[
            Condition(InferenceClass.ACCEPTED, "True", InferenceClass.DEVICES_DESCRIBED, summary)
        ]
    )
