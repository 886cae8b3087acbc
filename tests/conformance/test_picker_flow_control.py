"""Per-caller priority through the endpoint picker's flow control (issue #43 point 4;
docs/design/shared-front-door.md, "Priority as designed"), against the sources it relies on.

Nothing is read from the network here: the facts are held below with their citations, and
what Modelplane composes is checked against them. The default configs were also run once (a Go
test dropped into v0.10.0's ``cmd/epp/runner``): both load through ``parseConfigurationPhaseOne``
and ``Two`` with the gate on, ``initAdmissionControl`` wires the flow-control admission
controller, and the default band's fairness policy is round robin; at v0.9.0 both load with the
gate on and the band round robin too.

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
  between flows. A band's ``fairnessPolicyRef`` is resolved as a plugin instance by name
  (``pkg/epp/config/loader/flowcontrol.go`` ``resolvePlugin``); the loader registers only the
  default ordering, fairness and usage-limit policies itself (``pkg/epp/config/loader/defaults.go``
  ``ensureFlowControlLayer``), so another policy must be declared under ``plugins``, where a
  plugin without a name is named by its type (``applyStaticDefaults``).
- ``pkg/epp/config/loader/configloader.go`` ``decodeRawConfig``: the config is decoded strictly,
  so a field the types (``apix/config/v1alpha1/endpointpickerconfig_types.go``) do not name
  fails the picker's start; ``validateFeatureGates``: a gate must be registered.
- ``pkg/epp/flowcontrol/controller/config.go``: ``defaultRequestTTL`` 60s bounds a queued
  request's wait when the config sets none; ``internal/processor.go`` runs a dispatch cycle on
  every enqueue, and a band dispatches while the pool's saturation is under its usage limit (1.0
  with the default ``static-usage-limit-policy``): with the gate on, an unsaturated pool's
  requests are dispatched on arrival.
- ``pkg/epp/server/controller_config.go``: the picker discovers at start which
  InferenceObjective group the cluster serves, ``llm-d.ai`` preferred over the legacy group,
  and runs no objective reconciler when neither is served (read once, at start). The same file
  at v0.9.0 already prefers ``llm-d.ai``; v0.8.0 runs gateway-api-inference-extension v1.5.0's
  picker (its go.mod), which knows only ``inference.networking.x-k8s.io``.

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
- The same ordering holds on a cluster's fleet listener, where the fleet hop's Lua names the
  objective from ``x-modelplane-priority`` and ``x-modelplane-pool`` before the picker's ext_proc
  reads it.
- ``internal/gatewayapi/filters.go`` ``HeaderValueRegexp``: a RequestHeaderModifier value may
  hold ``%``, and ``internal/xds/translator/route.go`` ``buildXdsAddedHeaders`` passes it to
  Envoy as it is (a substitution, not escaped). ai-gateway ``internal/headermutator`` applies an
  AIGatewayRoute's ``headerMutation`` as literal values.
"""

from __future__ import annotations

import re

import pytest
import yaml

from modelplane.compose.inferencecluster.fleetpriority import FLEET_PRIORITY, script
from modelplane.compose.inferencegateway.callers import CALLER_HEADER, HEADER_GUARD
from modelplane.compose.inferencegateway.frontlua import FRONT_LUA
from modelplane.compose.modelreplica import objectives
from modelplane.compose.modelreplica.picker import RULES
from modelplane.compose.modelservice.routes import NO_TIMEOUT
from modelplane.compose.shared import frontdoor
from modelplane.compose.shared.endpointpicker import (
    DEFAULT_IMAGE,
    PREFILL_DECODE_CONFIG,
    UNIFIED_CONFIG,
)
from modelplane.compose.shared.pickerversions import OBJECTIVES_RELEASE, parse, release
from modelplane.compose.shared.replicapool import replica_pool_name
from tests.compose.inferencecluster.support import cluster, installing
from tests.compose.inferencecluster.support import manifest as stack_manifest
from tests.compose.inferencecluster.support import resources as stack_resources
from tests.compose.inferencegateway.test_callers import SEARCH, authed, compose
from tests.compose.modelreplica.routing_fixtures import context
from tests.compose.modelreplica.routing_fixtures import manifest as replica_manifest
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
# pkg/epp/flowcontrol/registry/config.go DefaultFairnessPolicyRef and roundrobin.go's type.
DEFAULT_FAIRNESS = "global-strict-fairness-policy"
ROUND_ROBIN = "round-robin-fairness-policy"
# apix/config/v1alpha1/endpointpickerconfig_types.go: the json names of EndpointPickerConfig,
# FlowControlConfig and PriorityBandConfig (decoded strictly, configloader.go).
CONFIG_FIELDS = {
    "apiVersion",
    "kind",
    "featureGates",
    "plugins",
    "schedulingProfiles",
    "saturationDetector",
    "dataLayer",
    "flowControl",
    "requestHandler",
    "parser",
}
FLOW_CONTROL_FIELDS = {
    "maxBytes",
    "maxRequests",
    "defaultRequestTTL",
    "defaultPriorityBand",
    "defaultNegativePriorityBand",
    "priorityBands",
    "usageLimitPolicyPluginRef",
    "saturationDetector",
    "enableEviction",
}
BAND_FIELDS = {"priority", "maxBytes", "maxRequests", "fairnessPolicyRef", "orderingPolicyRef"}
# pkg/epp/flowcontrol/controller/config.go defaultRequestTTL, in seconds.
DEFAULT_REQUEST_TTL = 60
# The first release whose picker prefers llm-d.ai objectives (controller_config.go at v0.9.0).
LLM_D_OBJECTIVES = (0, 9, 0)
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
        for rule in RULES
        if OBJECTIVE_GROUP in rule["apiGroups"] and "inferenceobjectives" in rule["resources"]
    ]
    assert granted
    assert {"get", "list", "watch"} <= set(granted[0]["verbs"])


DEFAULT_CONFIGS = pytest.mark.parametrize(
    "config", [UNIFIED_CONFIG, PREFILL_DECODE_CONFIG], ids=["unified", "prefill-decode"]
)


@DEFAULT_CONFIGS
def test_the_default_picker_configs_turn_flow_control_on(config: str) -> None:
    # The gate is off unless named: off, priorities of 0 and above are not told apart and only
    # negative ones are shed when saturated.
    assert FLOW_CONTROL_GATE in yaml.safe_load(config)["featureGates"]


@DEFAULT_CONFIGS
def test_the_default_band_takes_turns_between_flows(config: str) -> None:
    # The default fairness serves the oldest request of any flow: one caller's burst would
    # starve another of equal priority.
    band = yaml.safe_load(config)["flowControl"]["defaultPriorityBand"]
    assert band == {"fairnessPolicyRef": ROUND_ROBIN}
    assert ROUND_ROBIN != DEFAULT_FAIRNESS


@DEFAULT_CONFIGS
def test_the_fairness_policy_the_band_names_is_declared_as_a_plugin(config: str) -> None:
    # Resolved by name; only the default policies are registered without an entry.
    plugins = yaml.safe_load(config)["plugins"]
    named = {p.get("name") or p["type"] for p in plugins}
    assert ROUND_ROBIN in named


@DEFAULT_CONFIGS
def test_the_default_configs_name_only_fields_the_strict_decoder_knows(config: str) -> None:
    loaded = yaml.safe_load(config)
    assert set(loaded) <= CONFIG_FIELDS
    assert set(loaded["flowControl"]) <= FLOW_CONTROL_FIELDS
    assert set(loaded["flowControl"]["defaultPriorityBand"]) <= BAND_FIELDS


@DEFAULT_CONFIGS
def test_a_queued_request_waits_at_most_the_pickers_default_ttl(config: str) -> None:
    # Modelplane sets no TTL: a request queued while the pool is saturated waits up to 60s,
    # then is answered 429 (503 with no endpoint); a service's route sets no timeout unless
    # spec.timeout does, so by default the TTL is the only bound on that wait.
    assert "defaultRequestTTL" not in yaml.safe_load(config)["flowControl"]
    assert DEFAULT_REQUEST_TTL == 60
    assert NO_TIMEOUT == "0s"


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
    policy = _front({"value": 1})[FRONT_LUA]
    assert policy["kind"] == "EnvoyExtensionPolicy"
    assert set(policy["spec"]) == {"targetRefs", "lua"}
    assert FILTER_ORDER["api_key_auth"] < FILTER_ORDER["lua"] < FILTER_ORDER["ext_proc"]


def test_the_fairness_id_is_written_under_every_name_the_picker_reads() -> None:
    lua, _catalog = _front({"value": 1})[FRONT_LUA]["spec"]["lua"]
    for name in FAIRNESS_HEADERS:
        assert f'"{name}"' in lua["inline"]


def test_the_shared_objective_headers_are_the_pickers() -> None:
    assert frontdoor.OBJECTIVE_HEADERS == OBJECTIVE_HEADERS


def test_the_composed_objective_names_are_those_the_design_gives() -> None:
    pool = replica_pool_name("r")
    for value in VALUES:
        assert frontdoor.priority_objective_name(pool, value) == objective_name(pool, value)


def test_the_fleet_hop_names_the_objective_in_a_filter_before_the_pickers_ext_proc() -> None:
    # Lua (12 and on) runs before ext_proc (100 and on), and AI Gateway puts the picker's
    # ext_proc last: the picker reads what the script wrote.
    policy = stack_manifest(stack_resources(installing(cluster()))[FLEET_PRIORITY])
    assert policy["kind"] == "EnvoyExtensionPolicy"
    assert set(policy["spec"]) == {"targetRefs", "lua"}
    assert FILTER_ORDER["lua"] < FILTER_ORDER["ext_proc"]


def test_the_fleet_hop_writes_every_objective_name_the_picker_reads() -> None:
    lua = script()
    for name in OBJECTIVE_HEADERS:
        assert f'"{name}"' in lua


def test_objectives_are_composed_in_the_group_the_picker_prefers() -> None:
    composed = objectives.compose_objectives(context(), replica_pool_name("r"))
    groups = {replica_manifest(o)["apiVersion"].split("/")[0] for o in composed.values()}
    assert groups == {OBJECTIVE_GROUP}


def test_objectives_are_composed_from_the_release_that_prefers_their_group() -> None:
    assert OBJECTIVES_RELEASE == LLM_D_OBJECTIVES
    default = release(parse(DEFAULT_IMAGE).tag)
    assert default is not None and default >= OBJECTIVES_RELEASE
