"""The gateway's load balancer, as what a managed cluster's teardown waits on.

Envoy Gateway runs the cluster's Gateway behind a Service of type LoadBalancer in its own
namespace, and the cloud's service controller (in the managed control plane) backs that Service
with a load balancer: an NLB or ELB with its ENIs and security group on EKS, forwarding rules
on GKE, a public IP and rules on AKS. The controller holds the Service's cleanup finalizer until
the load balancer is deleted, so the Service being gone is the evidence that nothing of it is
left. Deleting the cluster or its network before then leaks it (on EKS its ENIs keep the subnets
and the VPC from being deleted at all).

One Object observes that Service (it never creates or changes it) and deletes it when the
cluster is deleted. crossplane-runtime keeps a managed resource whose deletion it requested
until the next observation finds the external object gone, and a terminating Service is still
found, so the Object stays until the load balancer is gone. It is on the cluster like every
Release and Object of the stack, so the Usages that keep the kubeconfig and the system pool
(and through them the cluster and its network) hold until it is gone. It outlives the Gateway's
Object: once the Gateway is gone Envoy Gateway never re-creates the Service behind it.
"""

from __future__ import annotations

import hashlib

from modelplane.compose.inferencecluster.components import EG_NAMESPACE, ENVOY_GATEWAY_COMPONENT
from modelplane.compose.inferencecluster.gateway import GATEWAY, GATEWAY_COMPONENT
from modelplane.compose.inferencecluster.releases import stack_object
from modelplane.compose.inferencecluster.target import MANAGED, Target
from modelplane.kube.objects import Obj

LOAD_BALANCER = "gateway-load-balancer"
POLICIES = ("Observe", "Delete")
"""Observed, never created or updated; deleted (and waited for) with the cluster."""
OUTLIVES = ((LOAD_BALANCER, GATEWAY),)


def envoy_service_name(gateway_namespace: str, gateway_name: str) -> str:
    """The Service Envoy Gateway creates for a Gateway in its own namespace: ``envoy-``, then
    ``<namespace>-<name>`` cut to 48 characters (and any trailing hyphen), then the first 8 hex
    digits of the SHA-256 of ``<namespace>/<name>``."""
    key = f"{gateway_namespace}/{gateway_name}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    readable = key.replace("/", "-")
    if len(readable) > 48:
        readable = readable[:48].removesuffix("-")
    return f"envoy-{readable}-{digest}"


def load_balancer(t: Target) -> dict[str, Obj]:
    """The Object on the gateway's Service, where Modelplane runs both the Gateway and Envoy
    Gateway (an External one may run its proxies anywhere, under any name), unless the stack is
    orphaned: that deletion waits on nothing on the cluster, which may be unreachable."""
    envoy_gateway = t.setting(ENVOY_GATEWAY_COMPONENT.field, ENVOY_GATEWAY_COMPONENT.version)
    if t.gateway.mode != MANAGED or not envoy_gateway.managed or t.orphan:
        return {}
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": envoy_service_name(t.gateway.namespace, t.gateway.name),
            "namespace": EG_NAMESPACE,
        },
    }
    return {
        LOAD_BALANCER: stack_object(
            t, GATEWAY_COMPONENT, LOAD_BALANCER, service, management_policies=list(POLICIES)
        )
    }
