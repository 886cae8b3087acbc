"""The endpoint picker a PrefillDecode deployment stamps into its replicas when it names none.

The public API writes prefill/decode as ``serving: {mode: PrefillDecode}``, with no picker. A
ModelReplica under PrefillDecode requires ``router: EndpointPicker`` and an ``endpointPicker``
(its XRD is the API contract, verbatim), so the deployment, whose XRD accepts the public shape,
stamps this default into every replica:

- ``router: EndpointPicker``;
- ``endpointPicker.template``: one ``epp`` container running the llm-d endpoint picker the
  ModelReplica composition runs by default (``compose.shared.endpointpicker``), with no args (the
  composition adds the wiring: pool, namespace, config file, ports);
- ``endpointPicker.config``: the same module's prefill/decode default, as data: prefix-cache
  and queue scoring in a prefill and a decode profile, and a decider that sends a request
  through prefill only when enough of its prompt is uncached.

A deployment that sets ``router`` and ``endpointPicker`` has them stamped verbatim; Unified
serving is stamped verbatim (the replica composition defaults its picker itself).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import yaml

from modelplane.compose.shared.endpointpicker import DEFAULT_IMAGE, PREFILL_DECODE_CONFIG
from modelplane.kube.objects import Obj

DEFAULT_PICKER: Obj = {
    "template": {"spec": {"containers": [{"name": "epp", "image": DEFAULT_IMAGE}]}},
    "config": yaml.safe_load(PREFILL_DECODE_CONFIG),
}
"""``serving.endpointPicker`` for a PrefillDecode deployment that names no picker."""


def replica_serving(serving: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``serving`` block stamped into each ModelReplica: the deployment's, with the default
    picker added under PrefillDecode when it names none."""
    if serving.get("mode") != "PrefillDecode" or "router" in serving:
        return serving
    if "endpointPicker" in serving:  # refused at admission; the replica's XRD says why
        return serving
    return {**serving, "router": "EndpointPicker", "endpointPicker": copy.deepcopy(DEFAULT_PICKER)}
