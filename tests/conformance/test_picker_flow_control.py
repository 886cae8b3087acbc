"""Per-caller priority through the endpoint picker's flow control (issue #43 point 4;
docs/design/shared-front-door.md, "Priority as designed"), against the sources it relies on.

Nothing is read from the network here: the facts are held below with their citations, and
what Modelplane composes is checked against them.

The picker (github.com/llm-d/llm-d-router at tag v0.10.0, the release of Modelplane's default
image; it carries its own ``pkg/epp``, its go.mod requiring gateway-api-inference-extension
v1.5.0 for the ``api/v1`` types only):

- ``pkg/epp/metadata/consts.go``: the objective header ``x-llm-d-inference-objective`` and the
  fairness header ``x-llm-d-inference-fairness-id``, each with a deprecated alias
  (``x-gateway-inference-objective``, ``x-gateway-inference-fairness-id``, the only names
  gateway-api-inference-extension v1.5.0's own ``pkg/epp/metadata/consts.go`` knows);
  ``GetLowerCaseHeaderValue`` tries the new name first, so whoever sets one must set or remove
  both.
- ``pkg/epp/handlers/request.go``: the objective's name is the header's value;
  ``pkg/epp/datastore/datastore.go`` keeps objectives by ``metadata.name`` alone;
  ``pkg/epp/controller/inferenceobjective_reconciler.go`` keeps only those whose ``spec.poolRef``
  names the picker's pool, and watches ``apix/v1alpha2`` (group ``llm-d.ai``,
  ``zz_generated.register.go``).
- ``pkg/epp/requestcontrol/director.go`` ``getInferenceObjective``: no objective of that name
  (or no header) is priority 0, never a refusal; ``HandleRequest``: the fairness id is the
  header's, else the ``agent-identity`` attribute, else ``default-flow``.
- ``cmd/epp/runner/runner.go``: ``RegisterFeatureGate(flowcontrol.FeatureGate, false)``, the
  gate ``flowControl`` (``pkg/epp/flowcontrol/config.go``); without it the legacy admission
  controller (``pkg/epp/requestcontrol/admission.go``) sheds only priorities below 0 while
  saturated.
- ``pkg/epp/flowcontrol/registry/config.go``: the default fairness policy within a band is
  ``global-strict-fairness-policy``; ``round-robin-fairness-policy``
  (``pkg/epp/framework/plugins/flowcontrol/fairness/roundrobin/roundrobin.go``) takes turns
  between flows.

The gateway (github.com/envoyproxy/gateway at v1.8.1; github.com/envoyproxy/ai-gateway at
v1.1.0):

- ``internal/xds/translator/httpfilters.go`` ``newOrderedHTTPFilter``: api_key_auth (6) runs
  before Lua (12 and on) and ext_proc (100 and on); an early header mutation
  (ClientTrafficPolicy) runs before every filter, so before the identity exists.
- ``internal/gatewayapi/luavalidator/lua_validator.go``: an inline script must define
  ``envoy_on_request`` or ``envoy_on_response`` and, in the default ``Strict`` mode, runs against
  the mocks of ``mocks.lua`` (``headers():get`` answers a string; ``replace`` and ``remove``
  exist); ``internal/gatewayapi/envoyextensionpolicy.go``: a Lua error fails the routes covered.
- ai-gateway ``internal/extensionserver/post_translate_modify.go``
  ``patchListenerWithInferencePoolFilters``: the picker's ext_proc goes just before the router,
  after every Envoy Gateway filter of the fleet listener.
- ``internal/gatewayapi/filters.go`` ``HeaderValueRegexp``: a RequestHeaderModifier value may
  hold ``%``, and ``internal/xds/translator/route.go`` ``buildXdsAddedHeaders`` passes it to
  Envoy as it is (a substitution, not escaped). ai-gateway ``internal/headermutator`` applies an
  AIGatewayRoute's ``headerMutation`` as literal values.
"""

from __future__ import annotations

import re

import pytest
import yaml

from modelplane.compose.endpointpicker import DEFAULT_IMAGE, PREFILL_DECODE_CONFIG, UNIFIED_CONFIG
from modelplane.compose.inferencegateway.callers import CALLER_HEADER, HEADER_GUARD
from modelplane.compose.inferencegateway.priority import PRIORITY
from modelplane.compose.modelreplica.picker import rules
from modelplane.compose.pickerversions import parse
from modelplane.compose.replicapool import replica_pool_name
from tests.compose.inferencegateway.test_callers import SEARCH, authed, compose
from tests.compose.modelservice.kit import manifests

# The release the facts above were read at.
READ_AT = "v0.10.0"

# pkg/epp/metadata/consts.go at v0.10.0: the current name, then its deprecated alias.
OBJECTIVE_HEADERS = ("x-llm-d-inference-objective", "x-gateway-inference-objective")
FAIRNESS_HEADERS = ("x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id")
# The other headers the picker reads to steer a request (same file).
OTHER_PICKER_HEADERS = (
    "x-llm-d-model-name-rewrite",
    "x-gateway-model-name-rewrite",
    "x-llm-d-slo-ttft-ms",
    "x-slo-ttft-ms",
    "x-llm-d-slo-tpot-ms",
    "x-slo-tpot-ms",
)
# apix/v1alpha2/zz_generated.register.go: the group the objective reconciler watches.
OBJECTIVE_GROUP = "llm-d.ai"
# pkg/epp/flowcontrol/config.go.
FLOW_CONTROL_GATE = "flowControl"
# Envoy Gateway v1.8.1 internal/xds/translator/httpfilters.go newOrderedHTTPFilter: each
# filter's place (lower runs first); an early header mutation runs before them all.
FILTER_ORDER = {"api_key_auth": 6, "lua": 12, "ext_proc": 100}
# Envoy Gateway v1.8.1 internal/gatewayapi/filters.go.
HEADER_VALUE = re.compile(r"^[!-~]+([\t ]?[!-~]+)*$")
# An object name (the objective's): a DNS subdomain of at most 253 characters.
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
# The priority values the design bounds spec.priority[].value to, and the objective name the
# fleet hop composes from the pool and the value.
VALUES = range(-5, 6)


def objective_name(pool: str, value: int) -> str:
    return f"{pool}-priority-{value}".replace("--", "-m")


def test_the_facts_were_read_at_the_release_of_the_default_picker_image() -> None:
    # A new default image means reading the files above again at its tag.
    assert parse(DEFAULT_IMAGE).tag == READ_AT


def test_the_picker_may_watch_objectives_in_the_group_it_reads_them_from() -> None:
    granted = [
        rule
        for rule in rules()
        if OBJECTIVE_GROUP in rule["apiGroups"] and "inferenceobjectives" in rule["resources"]
    ]
    assert granted
    assert {"get", "list", "watch"} <= set(granted[0]["verbs"])


@pytest.mark.parametrize("config", [UNIFIED_CONFIG, PREFILL_DECODE_CONFIG])
def test_the_default_picker_configs_leave_flow_control_off_so_priority_only_sheds(
    config: str,
) -> None:
    # The gate is off unless named: until the design's step 5, priorities of 0 and above are not
    # told apart by Modelplane's default picker, and only negative ones are shed when saturated.
    assert FLOW_CONTROL_GATE not in (yaml.safe_load(config).get("featureGates") or [])


def test_the_identity_header_is_none_the_picker_steers_by() -> None:
    # The picker would otherwise read the caller's name as an objective or a flow.
    steering = {*OBJECTIVE_HEADERS, *FAIRNESS_HEADERS, *OTHER_PICKER_HEADERS}
    assert CALLER_HEADER not in steering


@pytest.mark.parametrize("replica", ["r", "a" * 63, "team-search-qwen3-32b-h100-canary"])
def test_an_objective_named_for_its_pool_and_value_is_a_valid_object_name(replica: str) -> None:
    # Objectives are found by name and each names one pool: the name carries the pool.
    for value in VALUES:
        name = objective_name(replica_pool_name(replica), value)
        assert len(name) <= 253 and SUBDOMAIN.match(name), name


def test_a_route_header_value_may_hold_an_envoy_substitution_of_the_caller() -> None:
    # Envoy Gateway checks the value against its pattern and copies it to Envoy unescaped: the
    # path route could set the fairness id from the caller. Not relied on (the model route's
    # lane headers are AI Gateway's literal headerMutation).
    assert HEADER_VALUE.match(f"%REQ({CALLER_HEADER})%")


def _front(*entries: dict[str, object]) -> dict[str, dict]:
    gw = authed()
    gw["spec"]["priority"] = list(entries)
    return manifests(compose(gw, [SEARCH]))


def test_a_gateway_with_priority_removes_every_name_the_picker_reads_on_arrival() -> None:
    # The new name is read first: removing only the old one would let a client's new-name
    # header pick its own objective or flow.
    removed = _front({"value": 1})[HEADER_GUARD]["spec"]["headers"]["earlyRequestHeaders"]
    assert {*OBJECTIVE_HEADERS, *FAIRNESS_HEADERS} <= set(removed["remove"])


def test_the_caller_is_read_by_a_filter_that_runs_after_api_key_auth() -> None:
    # Lua, not a header mutation: only a filter after api_key_auth sees the identity.
    policy = _front({"value": 1})[PRIORITY]
    assert policy["kind"] == "EnvoyExtensionPolicy"
    assert set(policy["spec"]) == {"targetRefs", "lua"}
    assert FILTER_ORDER["api_key_auth"] < FILTER_ORDER["lua"] < FILTER_ORDER["ext_proc"]


def test_the_fairness_id_is_written_under_every_name_the_picker_reads() -> None:
    [lua] = _front({"value": 1})[PRIORITY]["spec"]["lua"]
    for name in FAIRNESS_HEADERS:
        assert f'"{name}"' in lua["inline"]
