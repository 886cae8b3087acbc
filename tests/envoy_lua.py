"""Running a composed Lua script on one request, in LuaJIT (the Lua Envoy builds its Lua filter
with), through lupa.

Envoy itself does not run here, so its stream handle is a stand-in, named as such: only the
calls Modelplane's scripts make, each as Envoy's Lua filter defines it
(envoyproxy/envoy ``source/extensions/filters/http/lua/wrappers.cc`` and ``lua_filter.cc``):
``handle:headers()``; on the headers ``get`` (the value, or nil when absent; names are
lower-case, as HTTP/2 carries them), ``replace`` (set, replacing any value), ``remove``;
``handle:respond(headers, body)`` (an answer sent at once, the request going no further).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lupa import luajit21

VALIDATOR = Path(__file__).parent / "upstream" / "luavalidator"

_STAND_IN = """
return function(request)
  local headers = {}
  function headers:get(name) return request[name] end
  function headers:replace(name, value) request[name] = value end
  function headers:remove(name) request[name] = nil end
  local handle = {}
  function handle:headers() return headers end
  function handle:respond(answer, body)
    self.status = answer[":status"]
    self.content_type = answer["content-type"]
    self.body = body
  end
  return handle
end
"""


@dataclass(frozen=True)
class Outcome:
    """What the script did to one request: its headers after, and the answer it sent, if any."""

    headers: dict[str, str]
    status: str | None
    content_type: str | None
    body: str | None


def on_request(script: str, headers: Mapping[str, str]) -> Outcome:
    """Load ``script`` as Envoy loads it (its top level once), then run its
    ``envoy_on_request`` on a request carrying ``headers``."""
    lua = luajit21.LuaRuntime(unpack_returned_tuples=True)
    lua.execute(script)
    request = lua.table_from(dict(headers))
    handle = lua.execute(_STAND_IN)(request)
    lua.globals().envoy_on_request(handle)
    return Outcome(
        {str(k): str(v) for k, v in request.items()},
        handle.status,
        handle.content_type,
        handle.body,
    )


def validate_strictly(script: str) -> None:
    """What Envoy Gateway v1.8.1's controller does with an EnvoyExtensionPolicy's Lua in its
    default ``Strict`` mode (``internal/gatewayapi/luavalidator/lua_validator.go``
    ``Validate``/``runLua``): print silenced, its mocks of Envoy's API and its security
    wrappers run, then the script with ``envoy_on_request(StreamHandle)`` appended. The
    controller runs gopher-lua; this runs LuaJIT, the same Lua 5.1 language. Raises on any
    error the script makes there."""
    lua = luajit21.LuaRuntime()
    lua.execute("print = function() end")
    lua.execute((VALIDATOR / "envoy-gateway-v1.8.1-mocks.lua").read_text())
    lua.execute((VALIDATOR / "envoy-gateway-v1.8.1-security.lua").read_text())
    lua.execute(f"{script}\nenvoy_on_request(StreamHandle)")
