"""The endpoint picker a PrefillDecode deployment stamps into its replicas when it names none.

The public API writes prefill/decode as ``serving: {mode: PrefillDecode}``, with no picker. A
ModelReplica under PrefillDecode requires ``router: EndpointPicker`` and an ``endpointPicker``
(its XRD is the API contract, verbatim), so the deployment, whose XRD accepts the public shape,
stamps this default into every replica:

- ``router: EndpointPicker``;
- ``endpointPicker.template``: one ``epp`` container running :data:`DEFAULT_IMAGE`, the llm-d
  endpoint picker the ModelReplica composition runs by default, with no args (the composition
  adds the wiring: pool, namespace, config file, ports);
- ``endpointPicker.config``: :data:`PREFILL_DECODE_CONFIG`, the ModelReplica composition's own
  prefill/decode default: prefix-cache and queue scoring in a prefill and a decode profile, and
  a decider that sends a request through prefill only when enough of its prompt is uncached.

A deployment that sets ``router`` and ``endpointPicker`` has them stamped verbatim; Unified
serving is stamped verbatim (the replica composition defaults its picker itself).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import yaml

Obj = dict[str, Any]

DEFAULT_IMAGE = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"
"""The ModelReplica composition's default picker image (the first tag whose config API is
llm-d.ai/v1alpha1 with the disagg-* plugins below)."""

PREFILL_DECODE_CONFIG_TEXT = """\
apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: approx-prefix-cache-producer
  parameters:
    autoTune: false
    blockSizeTokens: 64
    maxPrefixTokensToMatch: 16384
    lruCapacityPerServer: 31250
- type: prefix-cache-scorer
- type: queue-scorer
- type: prefill-filter
- type: decode-filter
- type: max-score-picker
- type: prefix-based-pd-decider
  parameters:
    nonCachedTokens: 16
- type: disagg-profile-handler
  parameters:
    deciders:
      prefill: prefix-based-pd-decider
schedulingProfiles:
- name: prefill
  plugins:
  - pluginRef: prefill-filter
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: queue-scorer
    weight: 1
  - pluginRef: max-score-picker
- name: decode
  plugins:
  - pluginRef: decode-filter
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: queue-scorer
    weight: 1
  - pluginRef: max-score-picker
"""

PREFILL_DECODE_CONFIG: Obj = yaml.safe_load(PREFILL_DECODE_CONFIG_TEXT)
"""The default EndpointPickerConfig for PrefillDecode, as stamped (``endpointPicker.config``)."""

DEFAULT_PICKER: Obj = {
    "template": {"spec": {"containers": [{"name": "epp", "image": DEFAULT_IMAGE}]}},
    "config": PREFILL_DECODE_CONFIG,
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
