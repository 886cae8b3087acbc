"""Envoy Gateway v1.8.1 (envoyproxy/gateway, tag v1.8.1, 097ab899b9d0) validates an
EnvoyExtensionPolicy's Lua before it programs it, in the ``Strict`` mode by default
(``internal/gatewayapi/luavalidator/lua_validator.go``): a script that fails there is refused,
and the routes it covers answer 500 (``internal/gatewayapi/envoyextensionpolicy.go``, no fail
open). Every Lua script Modelplane composes is run here as the validator runs it
(``tests.envoy_lua.validate_strictly``, upstream's mocks and security wrappers pinned in
tests/upstream/luavalidator)."""

from __future__ import annotations

import pytest
from lupa.luajit21 import LuaError

from modelplane.compose.inferencecluster import fleetpriority
from modelplane.compose.inferencegateway import catalog, priority
from tests.envoy_lua import validate_strictly

IDENTITIES = {"search-prod": {"team": "search"}, "ads": {"team": "ads"}}
SERVICE = {
    "metadata": {
        "name": "chat",
        "namespace": "search",
        "creationTimestamp": "2026-11-02T10:00:00Z",
    },
    "spec": {"callers": {"names": ["ads"]}},
}

SCRIPTS = {
    "front priority": priority.script({"search-prod": 5, "ads": -1}),
    "front priority, no caller": priority.script({}),
    "model catalog": catalog.script(catalog.models_by_caller([SERVICE], IDENTITIES)),
    "model catalog, no service": catalog.script(catalog.models_by_caller([], IDENTITIES)),
    "model catalog, no caller": catalog.script({}),
    "fleet priority": fleetpriority.script(),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_each_composed_script_passes_the_strict_validator(name: str) -> None:
    validate_strictly(SCRIPTS[name])


def test_a_script_the_validator_refuses_fails_here() -> None:
    # The check can fail: a call to what Envoy's API does not have.
    with pytest.raises(LuaError):
        validate_strictly("function envoy_on_request(handle)\n  handle:noSuchCall()\nend\n")
