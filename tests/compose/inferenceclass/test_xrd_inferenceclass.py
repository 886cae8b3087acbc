"""InferenceClass admission: each rule accepts a fitting class and rejects what the scheduler
could not use, with the API server's path and message."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fleet.builders import inference_class
from tests.fleet.xrd import errors, mutated, rule_error

Obj = dict[str, Any]
DEVICE = "spec.devices[0]"


def device(c: Obj) -> Obj:
    return c["spec"]["devices"][0]


def test_a_described_class_is_admitted_with_defaults() -> None:
    cls = inference_class("h100")
    del device(cls)["claim"]
    del device(cls)["count"]
    assert errors("inferenceclasses", cls) == []


CASES = [
    (
        "a DRA device needs a DeviceClass",
        lambda c: device(c).update(claim="Synthetic") or device(c).pop("deviceClassName"),
        lambda c: device(c).pop("deviceClassName"),
        DEVICE,
        "a DRA device needs a deviceClassName to be claimed through",
    ),
    (
        "attribute names are C identifiers, optionally domain-qualified",
        lambda c: device(c)["attributes"].update(
            {"resource.kubernetes.io/pcie_root": {"string": "x"}}
        ),
        lambda c: device(c)["attributes"].update({"pcie-root": {"string": "x"}}),
        f"{DEVICE}.attributes",
        "attribute names must be a C identifier of at most 32 characters, optionally prefixed by "
        "a DNS domain and '/'",
    ),
    (
        "an attribute sets exactly one type",
        lambda c: device(c)["attributes"].update(nvlink={"bool": True}),
        lambda c: device(c)["attributes"].update(nvlink={"bool": True, "int": 1}),
        f"{DEVICE}.attributes[nvlink]",
        "an attribute sets exactly one of string, version, bool and int",
    ),
    (
        "an attribute with no value is rejected",
        lambda c: device(c)["attributes"].update(cuda={"int": 12}),
        lambda c: device(c)["attributes"].update(cuda={}),
        f"{DEVICE}.attributes[cuda]",
        "an attribute sets exactly one of string, version, bool and int",
    ),
    (
        "a version attribute is a semantic version",
        lambda c: device(c)["attributes"].update(driverVersion={"version": "12.4.0-rc.1"}),
        lambda c: device(c)["attributes"].update(driverVersion={"version": "12.4"}),
        f"{DEVICE}.attributes[driverVersion]",
        "a version attribute must be a semantic version MAJOR.MINOR.PATCH, e.g. 12.4.0",
    ),
    (
        "capacity names are C identifiers, optionally domain-qualified",
        lambda c: device(c)["capacity"].update({"example.com/bandwidth": {"value": "1"}}),
        lambda c: device(c)["capacity"].update({"memory/": {"value": "1"}}),
        f"{DEVICE}.capacity",
        "capacity names must be a C identifier of at most 32 characters, optionally prefixed by "
        "a DNS domain and '/'",
    ),
    (
        "a capacity value is a quantity",
        lambda c: device(c)["capacity"].update(memory={"value": "1.5e3"}),
        lambda c: device(c)["capacity"].update(memory={"value": "80GB"}),
        f"{DEVICE}.capacity[memory]",
        "a capacity value must be a Kubernetes quantity, e.g. 80Gi or 1500m",
    ),
]


@pytest.mark.parametrize(
    ("accept", "reject", "path", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rule(accept: Any, reject: Any, path: str, message: str) -> None:
    base = inference_class("h100")
    assert errors("inferenceclasses", mutated(base, accept)) == []
    assert errors("inferenceclasses", mutated(base, reject)) == [rule_error(path, message)]
