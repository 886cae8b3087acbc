"""The serving stack an InferenceCluster composes on its cluster: what, at which version, how.

Every composed object is checked against the upstream CRD of its kind (provider-helm Release,
provider-kubernetes Object and ClusterProviderConfig, Crossplane Usage, Gateway API, Envoy
Gateway, cert-manager, KAI, Prometheus Operator) or, for built-in kinds, Kubernetes' own schemas.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import kubernetes_validate
import pytest

from modelplane.compose.inferencecluster.composer import HELM_PROVIDER_CONFIG, PROVIDER_CONFIG
from modelplane.compose.inferencecluster.crds import BUNDLES
from modelplane.labels import STACK_COMPONENT

from .support import (
    by_component,
    cluster,
    condition,
    created,
    installed,
    installing,
    manifest,
    releases,
    resources,
    run,
    upstream,
)

Obj = dict[str, Any]
KUBERNETES = "1.34"

STANDARD_RELEASES = {
    "cert-manager": ("https://charts.jetstack.io", "cert-manager", "v1.21.1", "cert-manager"),
    "envoy-gateway": (
        "oci://docker.io/envoyproxy",
        "gateway-helm",
        "v1.8.1",
        "envoy-gateway-system",
    ),
    "envoy-ai-gateway-crds": (
        "oci://docker.io/envoyproxy",
        "ai-gateway-crds-helm",
        "v1.1.0",
        "envoy-ai-gateway-system",
    ),
    "envoy-ai-gateway": (
        "oci://docker.io/envoyproxy",
        "ai-gateway-helm",
        "v1.1.0",
        "envoy-ai-gateway-system",
    ),
    "node-feature-discovery": (
        "oci://registry.k8s.io/nfd/charts",
        "node-feature-discovery",
        "0.19.0",
        "node-feature-discovery",
    ),
    "nvidia-dra-driver": (
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "dra-driver-nvidia-gpu",
        "0.4.1",
        "dra-driver-nvidia-gpu",
    ),
    "prometheus": (
        "https://prometheus-community.github.io/helm-charts",
        "kube-prometheus-stack",
        "88.5.3",
        "monitoring",
    ),
}
KAI_RELEASE = (
    "oci://ghcr.io/kai-scheduler/kai-scheduler",
    "kai-scheduler",
    "v0.15.2",
    "kai-scheduler",
)
GANG_RELEASES = {
    "Standard": {
        "leaderworkerset": ("oci://registry.k8s.io/lws/charts", "lws", "v0.10.0", "lws-system"),
        "kai-scheduler": KAI_RELEASE,
    },
    "Dynamo": {
        "grove": (
            "oci://ghcr.io/ai-dynamo/grove",
            "grove-charts",
            "v0.1.0-alpha.11",
            "grove-system",
        ),
        "kai-scheduler": KAI_RELEASE,
    },
}
COMPONENT_FIELDS = {
    "cert-manager": "certManager",
    "envoy-gateway": "envoyGateway",
    "envoy-ai-gateway": "envoyAIGateway",
    "inference-extension": "inferenceExtension",
    "node-feature-discovery": "nodeFeatureDiscovery",
    "nvidia-dra-driver": "nvidiaDRADriver",
    "prometheus": "prometheus",
}
STACK_FIELDS = {
    "Standard": {"leaderworkerset": "leaderWorkerSet", "kai-scheduler": "kaiScheduler"},
    "Dynamo": {"grove": "grove", "kai-scheduler": "kaiScheduler"},
}


def every_external(stack: str) -> dict[str, Obj]:
    fields = {**COMPONENT_FIELDS, **STACK_FIELDS[stack]}
    return {field: {"mode": "External"} for field in fields.values()}


def test_nothing_is_installed_until_both_provider_configs_exist() -> None:
    result = run(cluster())
    assert set(result.resources) == {PROVIDER_CONFIG, HELM_PROVIDER_CONFIG}
    cond = condition(result, "StackReady")
    assert (cond.status, cond.reason) == ("False", "WaitingForProviderConfigs")


def test_a_stack_once_composed_stays_composed_when_a_provider_config_goes_unobserved() -> None:
    ic = cluster()
    composing = installing(ic)
    observed = created(composing)
    del observed[HELM_PROVIDER_CONFIG]
    assert set(run(ic, observed).resources) == set(composing.resources)


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_each_stack_installs_its_charts_at_their_tested_versions(stack: str) -> None:
    found = {
        key: (
            r["spec"]["forProvider"]["chart"]["repository"],
            r["spec"]["forProvider"]["chart"]["name"],
            r["spec"]["forProvider"]["chart"]["version"],
            r["spec"]["forProvider"]["namespace"],
        )
        for key, r in releases(installing(cluster(stack=stack))).items()
    }
    assert found == {**STANDARD_RELEASES, **GANG_RELEASES[stack]}


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
@pytest.mark.parametrize("external", [False, True], ids=["managed", "external"])
def test_every_composed_object_passes_the_upstream_crds_or_kubernetes_schemas(
    stack: str, external: bool
) -> None:
    spec: Obj = {"stack": stack}
    if external:
        spec.update(servingStack=every_external(stack), gateway={"mode": "External"})
    ic = cluster(**spec)
    result = installed(ic, replicas=[{"metadata": {"name": "r", "namespace": "team"}}])
    for key, obj in resources(result).items():
        assert upstream().knows(obj["apiVersion"], obj["kind"]), key
        assert [str(e) for e in upstream().admit(copy.deepcopy(obj)).errors] == [], key
        if obj["kind"] != "Object" or obj["spec"].get("managementPolicies") == ["Observe"]:
            continue  # an observe-only Object's manifest names what it reads; it creates nothing
        remote = json.loads(json.dumps(manifest(obj)))
        if upstream().knows(remote["apiVersion"], remote["kind"]):
            assert [str(e) for e in upstream().admit(remote).errors] == [], key
        else:
            kubernetes_validate.validate(remote, KUBERNETES, strict=True)
    published = {**ic, "status": result.status}
    assert [str(e) for e in upstream().admit(published).errors] == []


def test_a_release_is_named_mp_chart_on_the_cluster_never_a_users_name() -> None:
    for key, r in releases(installing(cluster(stack="Dynamo"))).items():
        chart = r["spec"]["forProvider"]["chart"]["name"]
        assert r["metadata"]["annotations"] == {"crossplane.io/external-name": f"mp-{chart}"}, key
        assert r["metadata"]["name"].startswith(f"east-{key}"), key


def test_releases_reach_the_cluster_through_the_helm_provider_config_and_wait_for_workloads() -> (
    None
):
    for r in releases(installing(cluster())).values():
        assert r["spec"]["providerConfigRef"] == {"kind": "ClusterProviderConfig", "name": "east"}
        assert r["spec"]["forProvider"]["wait"] is True


@pytest.mark.parametrize(
    ("field", "key", "version"),
    [
        ("certManager", "cert-manager", "v1.20.3"),
        ("envoyGateway", "envoy-gateway", "v1.9.0"),
        ("envoyAIGateway", "envoy-ai-gateway", "v1.0.0"),
        ("nodeFeatureDiscovery", "node-feature-discovery", "0.18.3"),
        ("nvidiaDRADriver", "nvidia-dra-driver", "0.4.0"),
        ("leaderWorkerSet", "leaderworkerset", "0.9.0"),
        ("prometheus", "prometheus", "88.0.0"),
    ],
)
def test_a_version_set_on_the_cluster_is_the_version_installed(
    field: str, key: str, version: str
) -> None:
    ic = cluster(servingStack={field: {"version": version}})
    result = installing(ic)
    assert releases(result)[key]["spec"]["forProvider"]["chart"]["version"] == version
    state = next(c for c in result.status["servingStack"]["components"] if c["name"] == key)
    assert state["version"] == version


def test_both_envoy_ai_gateway_charts_follow_its_version() -> None:
    result = installing(cluster(servingStack={"envoyAIGateway": {"version": "v1.0.0"}}))
    for key in ("envoy-ai-gateway", "envoy-ai-gateway-crds"):
        assert releases(result)[key]["spec"]["forProvider"]["chart"]["version"] == "v1.0.0"


@pytest.mark.parametrize("field,key", [("grove", "grove"), ("kaiScheduler", "kai-scheduler")])
def test_a_dynamo_component_version_set_on_the_cluster_is_installed(field: str, key: str) -> None:
    ic = cluster(stack="Dynamo", servingStack={field: {"version": "v0.1.0"}})
    assert releases(installing(ic))[key]["spec"]["forProvider"]["chart"]["version"] == "v0.1.0"


@pytest.mark.parametrize("bundle", BUNDLES)
def test_the_inference_extension_version_selects_the_crd_bundle_applied(bundle: str) -> None:
    ic = cluster(servingStack={"inferenceExtension": {"version": bundle}})
    crd = manifest(resources(installing(ic))["inference-pool-crd"])
    assert crd["metadata"]["name"] == "inferencepools.inference.networking.k8s.io"
    assert crd["metadata"]["annotations"]["inference.networking.k8s.io/bundle-version"] == bundle


def test_the_inference_pool_crd_serves_the_version_replicas_compose() -> None:
    crd = manifest(resources(installing(cluster()))["inference-pool-crd"])
    served = [v["name"] for v in crd["spec"]["versions"] if v["served"]]
    assert (crd["spec"]["group"], served) == ("inference.networking.k8s.io", ["v1"])


@pytest.mark.parametrize("stack", ["Standard", "Dynamo"])
def test_an_external_component_is_observed_never_installed(stack: str) -> None:
    fields = {**COMPONENT_FIELDS, **STACK_FIELDS[stack]}
    for name, field in fields.items():
        result = installing(cluster(stack=stack, servingStack={field: {"mode": "External"}}))
        owned = by_component(result, name)
        assert not any(r["kind"] == "Release" for r in owned.values()), name
        observers = [r for k, r in owned.items() if k == f"{name}-observed"]
        assert len(observers) == 1, name
        assert observers[0]["spec"]["managementPolicies"] == ["Observe"], name
        state = next(c for c in result.status["servingStack"]["components"] if c["name"] == name)
        assert (state["mode"], "version" in state) == ("External", False)


def test_an_external_component_is_observed_by_the_api_it_provides() -> None:
    external = every_external("Dynamo")
    result = installing(cluster(stack="Dynamo", servingStack=external))
    observed = {
        manifest(r)["metadata"]["name"]
        for k, r in resources(result).items()
        if k.endswith("-observed")
    }
    assert observed == {
        "certificates.cert-manager.io",
        "envoyproxies.gateway.envoyproxy.io",
        "aigatewayroutes.aigateway.envoyproxy.io",
        "inferencepools.inference.networking.k8s.io",
        "nodefeatures.nfd.k8s-sigs.io",
        "gpu.nvidia.com",
        "podcliquesets.grove.io",
        "queues.scheduling.run.ai",
        "podmonitors.monitoring.coreos.com",
    }


def test_modelplanes_own_queue_and_pod_monitors_are_composed_for_external_components() -> None:
    external = {"kaiScheduler": {"mode": "External"}, "prometheus": {"mode": "External"}}
    keys = set(resources(installing(cluster(stack="Dynamo", servingStack=external))))
    assert {
        "kai-queue-root",
        "kai-queue",
        "podmonitor-endpoint-pickers",
        "podmonitor-engines",
    } <= keys


def test_an_external_gateway_is_observed_and_nothing_of_the_gateway_is_composed() -> None:
    result = installing(cluster(gateway={"mode": "External"}))
    gateway = by_component(result, "inference-gateway")
    assert list(gateway) == ["gateway"]
    assert gateway["gateway"]["spec"]["managementPolicies"] == ["Observe"]
    assert by_component(result, "fleet-tls") == {}


def test_the_external_gateways_class_is_published_as_observed() -> None:
    ic = cluster(gateway={"mode": "External"})
    observed = created(installing(ic))
    observed["gateway"]["status"] = {
        "atProvider": {"manifest": {"spec": {"gatewayClassName": "eg"}, "status": {}}}
    }
    assert run(ic, observed).status["gateway"]["className"] == "eg"


def test_every_stack_resource_carries_its_component_label() -> None:
    result = installing(cluster(stack="Dynamo"))
    for key, r in resources(result).items():
        if key in (PROVIDER_CONFIG, HELM_PROVIDER_CONFIG):
            continue
        assert r["metadata"]["labels"][STACK_COMPONENT], key


def test_each_stack_resource_is_ready_exactly_when_observed_ready() -> None:
    ic = cluster()
    assert {
        d.ready for k, d in installing(ic).resources.items() if k in releases(installing(ic))
    } == {"False"}
    done = installed(ic)
    assert {d.ready for d in done.resources.values()} == {"True"}


def test_a_failing_component_keeps_every_other_component_composed() -> None:
    ic = cluster(stack="Dynamo")
    observed = created(installing(ic))
    observed["grove"]["status"] = {
        "atProvider": {"state": "failed"},
        "conditions": [{"type": "Synced", "status": "False", "message": "timed out waiting"}],
    }
    result = run(ic, observed)
    assert set(result.resources) == set(observed)
    assert result.resources["grove"].resource == created(installing(ic))["grove"]


def test_the_dra_driver_allocates_gpus_without_compute_domains() -> None:
    values = releases(installing(cluster()))["nvidia-dra-driver"]["spec"]["forProvider"]["values"]
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}


def test_a_driver_root_set_on_the_cluster_is_passed_to_the_dra_driver() -> None:
    ic = cluster(servingStack={"nvidiaDRADriver": {"driverRoot": "/home/kubernetes/bin/nvidia"}})
    values = releases(installing(ic))["nvidia-dra-driver"]["spec"]["forProvider"]["values"]
    assert values["nvidiaDriverRoot"] == "/home/kubernetes/bin/nvidia"


def test_the_dra_driver_namespace_admits_its_critical_priority_pods() -> None:
    quota = manifest(resources(installing(cluster()))["nvidia-dra-driver-quota"])
    assert quota["metadata"]["namespace"] == "dra-driver-nvidia-gpu"
    scope = quota["spec"]["scopeSelector"]["matchExpressions"][0]
    assert scope["scopeName"] == "PriorityClass"
    assert set(scope["values"]) == {"system-node-critical", "system-cluster-critical"}


def patched(obj: dict) -> list[tuple[str, str, str, str]]:
    """What a copied Secret's references patch in: (namespace, Secret, from, to)."""
    return [
        (
            r["patchesFrom"]["namespace"],
            r["patchesFrom"]["name"],
            r["patchesFrom"]["fieldPath"],
            r["toFieldPath"],
        )
        for r in obj["spec"]["references"]
    ]


def test_the_cluster_receives_the_fleet_cas_certificate_and_never_its_key() -> None:
    ic = cluster(gateway={"fleetCASecretRef": {"name": "ca", "namespace": "pki"}})
    trust = resources(installing(ic))["fleet-ca"]
    secret = manifest(trust)
    assert "data" not in secret and "stringData" not in secret
    assert (secret["metadata"]["name"], secret["metadata"]["namespace"]) == (
        "modelplane-fleet-ca",
        "modelplane-system",
    )
    assert patched(trust) == [("pki", "ca", "data[tls.crt]", "data[ca.crt]")]


def test_the_fleet_listener_certificate_is_issued_on_the_control_plane_and_only_it_is_copied() -> (
    None
):
    composed = resources(installing(cluster("east")))
    issuer, certificate = composed["fleet-issuer"], composed["fleet-certificate"]
    assert (issuer["kind"], issuer["metadata"]["namespace"]) == ("Issuer", "crossplane-system")
    assert issuer["spec"] == {"ca": {"secretName": "modelplane-fleet-ca"}}
    assert certificate["kind"] == "Certificate"
    assert certificate["spec"]["issuerRef"]["name"] == issuer["metadata"]["name"]
    assert certificate["spec"]["dnsNames"] == ["east.fleet.modelplane.internal"]
    leaf = certificate["spec"]["secretName"]
    copied = composed["fleet-tls"]
    assert manifest(copied)["metadata"]["name"] == "inference-gateway-fleet-tls"
    assert patched(copied) == [
        ("crossplane-system", leaf, "data[tls.crt]", "data[tls.crt]"),
        ("crossplane-system", leaf, "data[tls.key]", "data[tls.key]"),
    ]


def test_each_cluster_has_its_own_leaf_so_a_renewal_reaches_one_cluster() -> None:
    leaves = {
        name: resources(installing(cluster(name)))["fleet-certificate"]["spec"]["secretName"]
        for name in ("east", "west")
    }
    assert leaves["east"] != leaves["west"]


def test_a_trust_bundle_replaces_the_ca_certificate_as_what_the_cluster_trusts() -> None:
    ic = cluster(gateway={"fleetTrustSecretRef": {"name": "fleet-trust"}})
    trust = resources(installing(ic))["fleet-ca"]
    assert patched(trust) == [("crossplane-system", "fleet-trust", "data[ca.crt]", "data[ca.crt]")]


def test_the_fleet_ca_defaults_to_modelplane_fleet_ca_in_crossplane_system() -> None:
    reference = resources(installing(cluster()))["fleet-ca"]["spec"]["references"][0]
    assert (reference["patchesFrom"]["namespace"], reference["patchesFrom"]["name"]) == (
        "crossplane-system",
        "modelplane-fleet-ca",
    )


def test_the_gateway_has_only_the_mutual_tls_fleet_listener() -> None:
    composed = resources(installing(cluster()))
    listeners = manifest(composed["gateway"])["spec"]["listeners"]
    assert [(lst["name"], lst["protocol"], lst["port"]) for lst in listeners] == [
        ("fleet", "HTTPS", 443),
    ]
    assert all(lst["allowedRoutes"] == {"namespaces": {"from": "All"}} for lst in listeners)
    assert listeners[0]["tls"] == {
        "mode": "Terminate",
        "certificateRefs": [{"kind": "Secret", "name": "inference-gateway-fleet-tls"}],
    }
    policy = manifest(composed["fleet-client-validation"])["spec"]
    assert policy["targetRefs"] == [
        {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": "inference-gateway",
            "sectionName": "fleet",
        }
    ]
    assert policy["tls"]["clientValidation"]["caCertificateRefs"] == [
        {"group": "", "kind": "Secret", "name": "modelplane-fleet-ca"}
    ]


def test_a_clusters_stack_is_built_once_for_its_spec_and_anew_when_the_spec_changes() -> None:
    east = cluster("east")
    first, again = installing(east), installing(copy.deepcopy(east))
    assert all(
        again.resources[k].resource is first.resources[k].resource
        for k in by_component(first, "cert-manager")
    )
    pinned = cluster("east", servingStack={"certManager": {"version": "v1.20.0"}})
    changed = installing(pinned)
    [key] = [k for k, r in releases(changed).items() if k == "cert-manager"]
    assert changed.resources[key].resource is not first.resources[key].resource
    assert manifest_version(changed.resources[key].resource) == "v1.20.0"
    assert manifest_version(installing(east).resources[key].resource) == "v1.21.1"


def manifest_version(release: Obj) -> str:
    return str(release["spec"]["forProvider"]["chart"]["version"])


def test_the_stacks_kept_are_bounded_and_the_least_recently_used_go_first() -> None:
    from modelplane.compose.inferencecluster import stack
    from modelplane.compose.inferencecluster.target import target_of

    targets = [target_of(cluster(f"c{i}"), f"c{i}") for i in range(stack.MEMO_SIZE + 1)]
    first = stack.built_for(targets[0])
    for t in targets[1:]:
        stack.built_for(t)
    assert len(stack._built) == stack.MEMO_SIZE
    assert stack.built_for(targets[0]) is not first  # forgotten, built again
    assert stack.built_for(targets[-1]) is stack.built_for(targets[-1])
