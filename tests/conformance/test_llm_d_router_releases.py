"""The llm-d endpoint picker and disaggregation sidecar images Modelplane composes, against the
releases of github.com/llm-d/llm-d-router (named llm-d-inference-scheduler up to v0.8.x, the same
repository and tags) and of github.com/kubernetes-sigs/gateway-api-inference-extension (GIE),
whose runner the picker was built on up to v0.8.x.

What was read, at each tag:

- Makefile and .github/workflows/ci-release.yaml: the images a release publishes. v0.4.0-v0.8.0:
  ``ghcr.io/llm-d/llm-d-inference-scheduler`` and ``ghcr.io/llm-d/llm-d-routing-sidecar``
  (``PROJECT_NAME``, the repository's name); v0.9.0 and v0.10.0:
  ``ghcr.io/llm-d/llm-d-router-endpoint-picker`` and ``ghcr.io/llm-d/llm-d-router-disagg-sidecar``
  (``EPP_IMAGE_NAME``, ``SIDECAR_IMAGE_NAME``). No ``llm-d-router-endpoint-picker:v0.4.0`` exists.
- The config group: v0.9.0 and v0.10.0 ``apix/config/v1alpha1/zz_generated.register.go``
  (``GroupName = "llm-d.ai"``), with ``inference.networking.x-k8s.io`` kept as deprecated
  (``pkg/epp/config/loader/configloader.go``); v0.4.0-v0.8.0 load configs with GIE's loader (go.mod:
  GIE v1.2.0 at v0.4.0, v1.5.0 at v0.8.0), whose ``apix/config/v1alpha1/zz_generated.register.go``
  registers only ``inference.networking.x-k8s.io``.
- The plugin types: v0.9.0 ``cmd/epp/runner/runner.go`` ``registerInTreePlugins``, each type's
  constant in its plugin package (``PLUGIN_TYPES_V0_9_0`` below). At v0.4.0 neither
  ``approx-prefix-cache-producer`` nor ``disagg-profile-handler`` nor ``prefix-based-pd-decider``
  exists (the last two appear at v0.7.0 and v0.6.0). v0.9.0's ``disagg-profile-handler``
  implements PreRequest itself (``disagg_profile_handler.go``), setting the
  ``x-prefiller-host-port`` header (``pkg/common/routing/common.go``), so no
  ``disagg-headers-handler`` is needed.
- The wiring flags: GIE ``cmd/epp/runner/runner.go`` defines ``--tracing`` and
  ``--metrics-endpoint-auth`` from v1.1.0 (absent at v1.0.0, which llm-d-inference-scheduler
  v0.3.x builds on; v0.4.0 builds on v1.2.0); llm-d-router v0.9.0 ``pkg/epp/server/options.go``
  defines every flag ``picker.wiring_args`` passes.
- The sidecar: v0.10.0 ``deploy/components/vllm-decode/deployment.yaml`` and
  ``deploy/environments/dev/p-d/patch-decode.yaml`` run it in every decode pod on port 8000 with
  ``--secure-proxy=false``, vLLM on 8200; ``pkg/sidecar/proxy/options.go`` defines ``--port``,
  ``--model-server-port`` (new in v0.10.0; v0.9.0 has only ``--vllm-port``), ``--kv-connector``
  (``nixlv2``: ``pkg/sidecar/constants/constants.go``) and ``--secure-proxy`` (default true: TLS,
  which the gateway's plain-HTTP hop to the pool cannot speak); ``pkg/sidecar/proxy/proxy.go``
  serves the completion paths itself and proxies everything else (``/metrics`` included) to
  the engine. ``test/sidecar/config/nixl/qwen-{prefiller,decoder}-pod.yaml`` set
  ``VLLM_NIXL_SIDE_CHANNEL_HOST`` to the pod IP on both engines.

- vLLM serves on port 8000 unless given ``--port`` (``vllm serve``), the pool's port here.

Checked by running them as well (Go test files dropped into each tag's tree): the runners of
v0.9.0 and v0.10.0 (``parseConfigurationPhaseOne`` and ``Two``) parse ``picker.wiring_args`` and
load both default configs and the replica-prefill-decode example's config, and refuse an unknown
plugin type; v0.8.0's loader (GIE v1.5.0) refuses both default configs: ``no kind
"EndpointPickerConfig" is registered for version "llm-d.ai/v1alpha1"``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from modelplane.compose.admission import Admission
from modelplane.compose.shared import pickerversions
from modelplane.compose.shared.endpointpicker import DEFAULT_IMAGE
from tests.conformance.fleets import NAMES, example, inputs, rendered_fleet

Obj = dict[str, Any]

# The in-tree plugin types llm-d-router v0.9.0 registers that Modelplane's configs and examples
# name; a config naming another type needs it checked upstream and added here.
PLUGIN_TYPES_V0_9_0 = frozenset(
    {
        "approx-prefix-cache-producer",  # requestcontrol/dataproducer/approximateprefix
        "prefix-cache-scorer",  # scheduling/scorer/prefix
        "queue-scorer",  # scheduling/scorer/queuedepth/queue.go
        "max-score-picker",  # scheduling/picker/maxscore/picker.go
        "prefill-filter",  # scheduling/filter/bylabel/roles.go
        "decode-filter",  # scheduling/filter/bylabel/roles.go
        "prefix-based-pd-decider",  # profilehandler/disagg/prefix_based_pd_decider.go
        "disagg-profile-handler",  # profilehandler/disagg/disagg_profile_handler.go
        "round-robin-fairness-policy",  # flowcontrol/fairness/roundrobin/roundrobin.go
    }
)
SIDECAR_FLAGS_V0_10_0 = frozenset({"port", "model-server-port", "kv-connector", "secure-proxy"})
SIDECAR = "llm-d-router-disagg-sidecar"
ROLE = "llm-d.ai/role"


def _pickers(name: str) -> list[tuple[str, Obj]]:
    """Each picker of the fleet: its image and the config its ConfigMap gives it."""
    configs = {
        (r.cluster, r.manifest["metadata"]["namespace"], r.manifest["metadata"]["name"]): r
        for r in rendered_fleet(name).remote("ConfigMap")
        if "epp-config.yaml" in (r.manifest.get("data") or {})
    }
    out = []
    for r in rendered_fleet(name).remote("Deployment"):
        spec = r.manifest["spec"]["template"]["spec"]
        if spec["containers"][0]["name"] != "epp":
            continue
        volume = spec["volumes"][0]["configMap"]["name"]
        config = configs[(r.cluster, r.manifest["metadata"]["namespace"], volume)]
        out.append(
            (
                spec["containers"][0]["image"],
                yaml.safe_load(config.manifest["data"]["epp-config.yaml"]),
            )
        )
    return out


def test_the_default_picker_is_a_published_release_that_reads_the_llm_d_ai_group() -> None:
    ref = pickerversions.parse(DEFAULT_IMAGE)
    assert DEFAULT_IMAGE.startswith("ghcr.io/llm-d/llm-d-router-endpoint-picker:")
    assert (pickerversions.release(ref.tag) or (0, 0, 0)) >= (0, 9, 0)


def test_the_oldest_release_modelplane_accepts_for_its_config_is_v0_9_0() -> None:
    assert pickerversions.need(None).version == (0, 9, 0)
    assert pickerversions.oldest_image((0, 9, 0)) == (
        "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0"
    )


def test_before_the_rename_the_picker_was_published_as_llm_d_inference_scheduler() -> None:
    assert pickerversions.oldest_image((0, 4, 0)) == (
        "ghcr.io/llm-d/llm-d-inference-scheduler:v0.4.0"
    )


@pytest.mark.parametrize("name", NAMES)
def test_every_picker_config_of_every_fleet_is_the_llm_d_ai_group(name: str) -> None:
    for _, config in _pickers(name):
        assert (config["apiVersion"], config["kind"]) == (
            "llm-d.ai/v1alpha1",
            "EndpointPickerConfig",
        )


@pytest.mark.parametrize("name", NAMES)
def test_every_plugin_type_of_every_fleet_is_registered_by_v0_9_0(name: str) -> None:
    for _, config in _pickers(name):
        assert {p["type"] for p in config["plugins"]} <= PLUGIN_TYPES_V0_9_0


@pytest.mark.parametrize("name", NAMES)
def test_every_picker_image_of_every_fleet_reads_the_config_it_is_given(name: str) -> None:
    for image, config in _pickers(name):
        assert pickerversions.too_old(image, config) is None, image


def _fleet_with_picker(image: str) -> Obj:
    [deployment] = [o for o in example("fleet-prefill-decode") if o["kind"] == "ModelDeployment"]
    deployment = copy.deepcopy(deployment)
    deployment["spec"]["template"]["spec"]["serving"] |= {
        "router": "EndpointPicker",
        "endpointPicker": {"template": {"spec": {"containers": [{"name": "epp", "image": image}]}}},
    }
    return deployment


def test_a_picker_from_before_the_llm_d_ai_group_is_refused_naming_the_field() -> None:
    admitted = Admission.default().admit(
        _fleet_with_picker("ghcr.io/llm-d/llm-d-inference-scheduler:v0.4.0")
    )
    [error] = admitted.errors
    assert str(error).startswith(
        "spec.template.spec.serving.endpointPicker.template.spec.containers[0].image: "
    )
    assert "v0.9.0 or later" in str(error)


def test_the_first_release_of_the_llm_d_ai_group_is_admitted() -> None:
    admitted = Admission.default().admit(
        _fleet_with_picker("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0")
    )
    assert admitted.errors == []


def _pods(name: str, role: str) -> list[Obj]:
    """The pod templates of the fleet's serving pods of a role (llm-d.ai/role)."""
    return [
        r.manifest["spec"]["template"]
        for r in rendered_fleet(name).remote("Deployment")
        if r.manifest["spec"]["template"]["metadata"]["labels"].get(ROLE) == role
    ]


def _pool_ports(name: str) -> set[int]:
    return {
        p["number"]
        for r in rendered_fleet(name).remote("InferencePool")
        for p in r.manifest["spec"]["targetPorts"]
    }


def _flags(args: list[str]) -> dict[str, str]:
    pairs = (a.lstrip("-").partition("=") for a in args if a.startswith("-"))
    return {k: v for k, _, v in pairs}


def _disaggregated(obj: Obj) -> bool:
    spec = obj.get("spec") or {}
    serving = spec.get("serving") or ((spec.get("template") or {}).get("spec") or {}).get("serving")
    return (serving or {}).get("mode") == "PrefillDecode"


PD_NAMES = [n for n in NAMES if any(_disaggregated(o) for o in inputs(n))]


@pytest.mark.parametrize("name", PD_NAMES)
def test_every_decode_pod_runs_the_disagg_sidecar_on_the_pool_port(name: str) -> None:
    pods = _pods(name, "decode")
    assert pods
    for pod in pods:
        [sidecar] = [c for c in pod["spec"]["containers"] if SIDECAR in c["image"]]
        flags = _flags(sidecar["args"])
        assert set(flags) <= SIDECAR_FLAGS_V0_10_0
        assert int(flags["port"]) in _pool_ports(name)
        assert flags["secure-proxy"] == "false"


@pytest.mark.parametrize("name", PD_NAMES)
def test_every_decode_sidecar_forwards_to_its_engine_over_the_engines_kv_connector(
    name: str,
) -> None:
    for pod in _pods(name, "decode"):
        containers = pod["spec"]["containers"]
        [sidecar] = [c for c in containers if SIDECAR in c["image"]]
        [engine] = [c for c in containers if c["name"] == "engine"]
        flags = _flags(sidecar["args"])
        assert _arg(engine["args"], "--port") == flags["model-server-port"]
        assert json.loads(_arg(engine["args"], "--kv-transfer-config") or "{}") == {
            "kv_connector": "NixlConnector",
            "kv_role": "kv_both",
        }
        assert flags["kv-connector"] == "nixlv2"
        ref = pickerversions.parse(sidecar["image"])
        assert (pickerversions.release(ref.tag) or (0, 0, 0)) >= (0, 10, 0)


@pytest.mark.parametrize("name", PD_NAMES)
def test_every_prefill_engine_serves_the_pool_port_itself(name: str) -> None:
    """The picker hands the decode sidecar the prefill pod's address at the pool's port; vLLM
    serves on 8000 unless told --port."""
    prefill = _pods(name, "prefill")
    assert prefill
    for pod in prefill:
        [engine] = [c for c in pod["spec"]["containers"] if c["name"] == "engine"]
        assert int(_arg(engine["args"], "--port") or 8000) in _pool_ports(name)


@pytest.mark.parametrize("name", PD_NAMES)
def test_every_engine_advertises_its_pod_ip_for_the_nixl_side_channel(name: str) -> None:
    for pod in _pods(name, "prefill") + _pods(name, "decode"):
        [engine] = [c for c in pod["spec"]["containers"] if c["name"] == "engine"]
        env = {e["name"]: e for e in engine.get("env") or ()}
        assert env["VLLM_NIXL_SIDE_CHANNEL_HOST"]["valueFrom"] == {
            "fieldRef": {"fieldPath": "status.podIP"}
        }


def _arg(args: list[str], flag: str) -> str | None:
    """A flag's value, spelled ``--flag value`` or ``--flag=value``."""
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a[len(flag) + 1 :]
    return None
