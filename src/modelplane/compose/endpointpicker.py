"""The endpoint picker Modelplane runs when a replica names none: image and configurations.

Shared by the ModelReplica composition, which runs this picker for a replica that names none,
and the ModelDeployment composition, which stamps it into the replicas of a PrefillDecode
deployment written in the public API's shape (no picker named), so both run the same one.
"""

from __future__ import annotations

# v0.9.0 is the first release that reads the configs below (compose.pickerversions); v0.10.0
# also reports not-ready while it drains on shutdown, so a rollout never routes to a leaving one.
DEFAULT_IMAGE = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"

# Prefix-cache affinity first, queue depth to break ties and shed load. The producer floors the
# block size at 64 tokens, so 64 is exact for every engine without peeking at engine flags.
UNIFIED_CONFIG = """\
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
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: queue-scorer
    weight: 1
  - pluginRef: max-score-picker
"""

# Two profiles over the role-labelled pods: the decider sends a request through prefill only
# when enough of its prompt is uncached to be worth the KV transfer.
PREFILL_DECODE_CONFIG = """\
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
