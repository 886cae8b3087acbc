"""The endpoint picker Modelplane runs when a replica names none: image and configurations.

Shared by the ModelReplica composition, which runs this picker for a replica that names none,
and the ModelDeployment composition, which stamps it into the replicas of a PrefillDecode
deployment written in the public API's shape (no picker named), so both run the same one.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from modelplane.compose.shared.gpu_taint import GPU_TOLERATION

# v0.9.0 is the first release that reads the configs below (compose.shared.pickerversions); v0.10.0
# also reports not-ready while it drains on shutdown, so a rollout never routes to a leaving one.
DEFAULT_IMAGE = "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0"

# Flow control (docs/design/shared-front-door.md, "Priority as designed"): the gate is off by
# default (llm-d-router v0.10.0 cmd/epp/runner/runner.go), and off, priority only sheds
# negative requests while saturated. On, requests wait in the picker by priority band while the
# pool is saturated, and are dispatched on arrival while it is not (the processor runs a dispatch
# cycle on every enqueue, pkg/epp/flowcontrol/controller/internal/processor.go). Within a band
# the default fairness policy serves the oldest request of any flow first; round robin takes
# turns between flows (each caller is one: the front gateway writes its identity as the fairness
# id), so one caller's burst cannot starve another of equal priority. The loader resolves a
# fairnessPolicyRef as a plugin instance by name and registers only the default policies itself
# (pkg/epp/config/loader/flowcontrol.go, defaults.go): the plugin is declared.
FLOW_CONTROL = """\
flowControl:
  defaultPriorityBand:
    fairnessPolicyRef: round-robin-fairness-policy
"""
FAIRNESS_PLUGIN = "- type: round-robin-fairness-policy\n"

# Both configs open the same way: the producer floors the block size at 64 tokens, so 64 is
# exact for every engine without peeking at engine flags.
_HEAD = """\
apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
featureGates:
- flowControl
plugins:
- type: approx-prefix-cache-producer
  parameters:
    autoTune: false
    blockSizeTokens: 64
    maxPrefixTokensToMatch: 16384
    lruCapacityPerServer: 31250
- type: prefix-cache-scorer
- type: queue-scorer
"""
# Prefix-cache affinity first, queue depth to break ties and shed load.
_SCORING = """\
  - pluginRef: prefix-cache-scorer
    weight: 2
  - pluginRef: queue-scorer
    weight: 1
  - pluginRef: max-score-picker
"""

UNIFIED_CONFIG = (
    _HEAD
    + "- type: max-score-picker\n"
    + FAIRNESS_PLUGIN
    + "schedulingProfiles:\n- name: default\n  plugins:\n"
    + _SCORING
    + FLOW_CONTROL
)

# Two profiles over the role-labelled pods: the decider sends a request through prefill only
# when enough of its prompt is uncached to be worth the KV transfer.
PREFILL_DECODE_CONFIG = (
    _HEAD
    + """\
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
"""
    + FAIRNESS_PLUGIN
    + "schedulingProfiles:\n- name: prefill\n  plugins:\n  - pluginRef: prefill-filter\n"
    + _SCORING
    + "- name: decode\n  plugins:\n  - pluginRef: decode-filter\n"
    + _SCORING
    + FLOW_CONTROL
)


GPU_NODE_LABELS = (
    "modelplane.ai/gpu",  # Modelplane's managed GPU pools (managed.common.GPU_LABEL)
    "nvidia.com/gpu.present",  # the GPU Operator's feature discovery
    "feature.node.kubernetes.io/pci-10de.present",  # Node Feature Discovery, by vendor
    "feature.node.kubernetes.io/pci-0300_10de.present",  # by class and vendor (its default)
    "feature.node.kubernetes.io/pci-0302_10de.present",
)
"""Labels only a node with an NVIDIA GPU carries."""
PLACEMENT: Mapping[str, Any] = MappingProxyType(
    {
        "affinity": {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "preference": {
                            "matchExpressions": [
                                {"key": label, "operator": "DoesNotExist"}
                                for label in GPU_NODE_LABELS
                            ]
                        },
                    }
                ]
            }
        },
        "tolerations": [dict(GPU_TOLERATION)],
    }
)
"""Where the picker's pods run: anywhere, GPU nodes last. The picker asks 4 CPUs and 8Gi and
needs no GPU, so it prefers a node with none; but it tolerates the GPU taint, because on a
cluster whose only pool is a tainted GPU pool (small clusters often are) it would otherwise stay
Pending, and with no picker answering, the gateway fails every request to the pool (ai-gateway
sets FailureModeAllow false). Read-only: deep-copy it into composed output."""
