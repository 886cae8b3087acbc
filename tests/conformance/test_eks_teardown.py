"""Deleting an EKS cluster Modelplane provisioned, against what AWS needs to let it go.

- The gateway's load balancer is deleted by the service controller in EKS's control plane,
  k8s.io/cloud-provider v0.35.4 controllers/service/controller.go: ``processLoadBalancerDelete``
  calls the cloud's ``EnsureLoadBalancerDeleted`` and only its success removes the Service's
  ``service.kubernetes.io/load-balancer-cleanup`` finalizer. The AWS implementation,
  kubernetes/cloud-provider-aws v1.35.2 pkg/providers/v1/aws.go ``EnsureLoadBalancerDeleted``,
  calls ELB's and ELBv2's ``DeleteLoadBalancer`` and deletes the load balancer's security
  groups, with the cluster role's credentials: the permissions AmazonEKSClusterPolicy grants.
  Without them the Service keeps its finalizer, the Object waiting on it never goes, and the
  Usages behind it hold the cluster, its subnets and its VPC for good.
- terraform-provider-aws website/docs/r/eks_node_group.html.markdown (at 05389d46): "Ensure
  that IAM Role permissions are created before and deleted after EKS Node Group handling.
  Otherwise, EKS will not be able to properly delete EC2 Instances and Elastic Network
  Interfaces" (and eks_cluster.html.markdown likewise for the cluster's role and its security
  groups).
"""

from __future__ import annotations

import pytest

from tests.compose.inferencecluster.managed import managed, provisioned, wave_of, waves

Obj = dict

CLUSTER_POLICY = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
NODE_POLICIES = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
)


@pytest.fixture(scope="module")
def composed() -> dict[str, Obj]:
    return provisioned(managed("EKS")).resources


def _attachment(composed: dict[str, Obj], policy: str) -> str:
    [key] = [
        k
        for k, o in composed.items()
        if o["kind"] == "RolePolicyAttachment"
        and o["spec"]["forProvider"].get("policyArn") == policy
    ]
    return key


def test_the_cluster_role_keeps_its_elb_permissions_until_the_load_balancer_is_gone(
    composed: dict[str, Obj],
) -> None:
    wave = wave_of(waves(composed))
    assert wave[_attachment(composed, CLUSTER_POLICY)] > wave["gateway-load-balancer"]


def test_the_cluster_role_keeps_its_policy_until_the_cluster_is_gone(
    composed: dict[str, Obj],
) -> None:
    wave = wave_of(waves(composed))
    assert wave[_attachment(composed, CLUSTER_POLICY)] > wave["cluster"]


@pytest.mark.parametrize("policy", NODE_POLICIES)
def test_the_node_role_keeps_each_policy_until_every_node_group_is_gone(
    composed: dict[str, Obj], policy: str
) -> None:
    wave = wave_of(waves(composed))
    groups = [k for k, o in composed.items() if o["kind"] == "NodeGroup"]
    assert len(groups) == 2
    assert wave[_attachment(composed, policy)] > max(wave[g] for g in groups)
