"""The usage summary's request, as crossplane-contrib/provider-http v1.0.14 treats it.

Read at the v1.0.14 tag (3bf6f9d9ac61):

- apis/namespaced/disposablerequest/v1alpha2/disposablerequest_types.go: ``forProvider.url``,
  ``method``, ``headers`` and ``body`` carry ``self == oldSelf`` rules (immutable); the answer
  is stored in ``status.response.{statusCode, body}``.
- internal/service/disposablerequest/observe.go ``CalculateUpToDateStatus``: with
  ``shouldLoopInfinitely`` and no ``rollbackRetriesLimit`` the request is never up to date, so
  it is sent again on every reconcile; internal/controller/namespaced/disposablerequest/
  disposablerequest.go ``customPollIntervalHook`` schedules that reconcile ``nextReconcile``
  after ``status.lastReconcileTime``.
- internal/service/disposablerequest/deployaction.go: a send that fails (no connection) sets
  only ``status.error`` and ``lastReconcileTime`` (``handleHttpRequestError``), so the last
  response stays; an HTTP error code stores that code and its body (``handleHttpErrorStatus``);
  ``status.error`` is never cleared by a later success, so it is not evidence of anything now.
- the same controller's ``Connect``: ``providerConfigRef.kind: ProviderConfig`` is looked up in
  the request's own namespace; only ``credentials.source: Secret`` reads credentials.

And crossplane/crossplane v2.3.4 internal/controller/apiextensions/composite/
composition_functions.go (``FunctionComposer.Compose``): each desired resource is applied with
server-side apply; an error other than Invalid (a kind the API server does not serve is a
NoKindMatch) returns ``ComposedResourceError`` at once, before the XR's status is applied, so one
composed resource of an unserved kind stalls every change to the composite.

So the composer reads only a 200 answer, never ``status.error``, takes the summary's time from
the answer itself, and makes a new request (new name, new composition resource name) whenever
the URL would change; and composes the request only where its CRD is served.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.modelservice import usage
from modelplane.compose.modelservice.composer import compose_service
from tests.compose.modelservice.test_usage import config, inputs, request

CRDS = Path(__file__).resolve().parents[1] / "upstream" / "crds"
Obj = dict[str, Any]


def schema(plural: str) -> Obj:
    crd = yaml.safe_load((CRDS / f"http.m.crossplane.io_{plural}.yaml").read_text())
    [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    assert crd["spec"]["scope"] == "Namespaced"
    return dict(version["schema"]["openAPIV3Schema"])


def test_the_url_is_immutable_so_a_new_url_is_a_new_request() -> None:
    url = schema("disposablerequests")["properties"]["spec"]["properties"]["forProvider"]
    rules = url["properties"]["url"]["x-kubernetes-validations"]
    assert [r["rule"] for r in rules] == ["self == oldSelf"]
    before = request(compose_service(inputs([config()])))
    moved = config()
    moved["data"]["prometheus"]["serverAddress"] = "http://other:9090"
    after = request(compose_service(inputs([moved])))
    assert before["metadata"]["name"] != after["metadata"]["name"]


def test_the_answer_is_read_where_provider_http_stores_it() -> None:
    status = schema("disposablerequests")["properties"]["status"]["properties"]
    response = status["response"]["properties"]
    assert (response["statusCode"]["type"], response["body"]["type"]) == ("integer", "string")


def test_the_request_loops_forever_with_no_retry_limit_or_expected_response() -> None:
    # A rollbackRetriesLimit would make the request up to date once sent (it stops looping);
    # an expectedResponse that failed would stop it after the limit.
    sent = request(compose_service(inputs([config()])))["spec"]["forProvider"]
    assert sent["shouldLoopInfinitely"] is True
    assert "rollbackRetriesLimit" not in sent and "expectedResponse" not in sent


def test_the_provider_config_is_namespaced_and_reads_no_credentials() -> None:
    source = schema("providerconfigs")["properties"]["spec"]["properties"]["credentials"]
    assert "None" in source["properties"]["source"]["enum"]
    result = compose_service(inputs([config()]))
    pc = result.resources[usage.PROVIDER_CONFIG].resource
    ref = request(result)["spec"]["providerConfigRef"]
    assert ref == {"kind": "ProviderConfig", "name": pc["metadata"]["name"]}
    assert pc["metadata"]["namespace"] == request(result)["metadata"]["namespace"] == "ml"


def test_the_request_is_composed_only_where_its_crd_is_served() -> None:
    # Absent, Crossplane would fail the whole composition on applying it (module docstring).
    absent = compose_service(inputs([config()], served=[]))
    assert not [k for k in absent.resources if k.startswith(f"{usage.REQUEST}/")]
    assert usage.PROVIDER_CONFIG not in absent.resources
    served = compose_service(inputs([config()]))
    assert [k for k in served.resources if k.startswith(f"{usage.REQUEST}/")]
