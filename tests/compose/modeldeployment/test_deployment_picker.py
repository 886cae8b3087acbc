"""The public API's prefill/decode shape, ``serving: {mode: PrefillDecode}`` with no picker:
admitted by the ModelDeployment XRD, and stamped into ModelReplicas with the default picker
their XRD requires."""

from __future__ import annotations

from typing import Any

import yaml

from modelplane.compose.modeldeployment import picker
from modelplane.compose.modelreplica import picker as replica_picker
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_stack
from tests.compose.through import composed_deployment
from tests.fleet.builders import H100, declared_cluster, fleet
from tests.fleet.xrd import errors

Obj = dict[str, Any]

# The shape of the public API's "Disaggregated serving" example (modelplaneai/modelplane,
# docs/content/models/model-deployment.md): serving.mode only, two phase engines, each member
# one engine container.
PUBLIC_PD = """\
apiVersion: modelplane.ai/v1alpha1
kind: ModelDeployment
metadata: {name: qwen-pd, namespace: ml}
spec:
  replicas: 1
  template:
    spec:
      serving:
        mode: PrefillDecode
      engines:
      - name: prefill
        phase: Prefill
        members:
        - role: Standalone
          nodeSelector:
            devices:
            - name: gpu
              count: 1
              selectors: [{cel: 'device.driver == "gpu.nvidia.com"'}]
          template:
            spec:
              containers:
              - {name: engine, image: "vllm/vllm-openai:v0.11.0", args: [--model, Qwen/Qwen3-8B]}
      - name: decode
        phase: Decode
        members:
        - role: Standalone
          nodeSelector:
            devices:
            - name: gpu
              count: 1
              selectors: [{cel: 'device.driver == "gpu.nvidia.com"'}]
          template:
            spec:
              containers:
              - {name: engine, image: "vllm/vllm-openai:v0.11.0", args: [--model, Qwen/Qwen3-8B]}
"""


def public_pd() -> Obj:
    md: Obj = yaml.safe_load(PUBLIC_PD)
    return md


def replicas_of(md: Obj) -> list[Obj]:
    result = composed_deployment(md, fleet("east"))
    return [d.resource for d in result.resources.values()]


def test_the_public_prefill_decode_deployment_is_admitted() -> None:
    assert errors("modeldeployments", public_pd()) == []


def test_its_replicas_carry_the_default_picker_and_pass_the_replica_xrd() -> None:
    [mr] = replicas_of(public_pd())
    assert mr["spec"]["serving"] == {
        "mode": "PrefillDecode",
        "router": "EndpointPicker",
        "endpointPicker": picker.DEFAULT_PICKER,
    }
    assert errors("modelreplicas", mr) == []


def test_the_default_picker_is_the_replica_compositions_own_default() -> None:
    [container] = picker.DEFAULT_PICKER["template"]["spec"]["containers"]
    assert container == {"name": "epp", "image": replica_picker.DEFAULT_IMAGE}
    assert picker.DEFAULT_PICKER["config"] == yaml.safe_load(replica_picker.PREFILL_DECODE_CONFIG)


def test_a_picker_the_deployment_names_is_stamped_verbatim() -> None:
    md = public_pd()
    own = {"template": {"spec": {"containers": [{"name": "epp", "image": "epp:v1"}]}}}
    serving = {"mode": "PrefillDecode", "router": "EndpointPicker", "endpointPicker": own}
    md["spec"]["template"]["spec"]["serving"] = serving
    [mr] = replicas_of(md)
    assert mr["spec"]["serving"] == serving


def test_unified_serving_is_stamped_verbatim() -> None:
    md = public_pd()
    md["spec"]["template"]["spec"]["serving"] = {"mode": "Unified"}
    for engine in md["spec"]["template"]["spec"]["engines"]:
        del engine["phase"]
    [mr] = replicas_of(md)
    assert mr["spec"]["serving"] == {"mode": "Unified"}


def test_the_public_prefill_decode_deployment_renders_to_a_serving_picker() -> None:
    fleet = [H100, declared_cluster("east", [("h100", "h100", 2)])]
    docs = render_documents(
        default_registry(),
        [public_pd(), *fleet],
        admit=api_server_admission(),
        simulate=simulate_stack,
    )
    [mr] = [d for d in docs if d["kind"] == "ModelReplica"]
    assert mr["spec"]["serving"]["router"] == "EndpointPicker"
    pickers = [
        d["spec"]["forProvider"]["manifest"]
        for d in docs
        if d["kind"] == "Object"
        and d["spec"]["forProvider"]["manifest"]["kind"] == "Deployment"
        and d["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
        == replica_picker.DEPLOYMENT_KEY
    ]
    [epp] = [p["spec"]["template"]["spec"]["containers"][0] for p in pickers]
    assert epp["image"] == replica_picker.DEFAULT_IMAGE
