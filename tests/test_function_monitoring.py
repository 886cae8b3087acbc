"""How a Prometheus finds the function's metrics: the manifests docs/operations.md gives are
admitted by their CRDs with nothing pruned, and agree with how Crossplane runs a function's pod
(crossplane/crossplane v2.3.4, c2670a735103, each rule cited where it is held) and with what
`modelplane serve` listens on; every metric the server exports is documented there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from modelplane.compose.admission import Admission as Definitions
from modelplane.function import MIB
from modelplane.kube.admission import Admission
from modelplane.metrics import DEFAULT_ADDRESS, Metrics, split_address
from modelplane.serve import REGISTRY, Pool
from tests.crossplane_packages import dependency_name

ROOT = Path(__file__).resolve().parents[1]
CRDS = ROOT / "tests" / "upstream" / "crds"
OPERATIONS = (ROOT / "docs" / "operations.md").read_text()
SECTION = "## Watching the composition function: metrics\n"
CONFIGURATION = yaml.safe_load((ROOT / "package" / "configuration" / "crossplane.yaml").read_text())
[FUNCTION] = [d for d in CONFIGURATION["spec"]["dependsOn"] if d["kind"] == "Function"]


def section() -> str:
    start = OPERATIONS.index(SECTION)
    end = OPERATIONS.find("\n## ", start + 1)
    return OPERATIONS[start : end if end >= 0 else None]


def documented(kind: str) -> dict[str, Any]:
    docs = [
        d
        for block in re.findall(r"```yaml\n(.*?)```", section(), re.S)
        for d in yaml.safe_load_all(block)
        if d
    ]
    [found] = [d for d in docs if d["kind"] == kind]
    return found


def kept(written: Any, admitted: Any) -> bool:
    """Whether everything written survived admission (pruning drops unknown fields silently)."""
    if isinstance(written, dict):
        return isinstance(admitted, dict) and all(
            k in admitted and kept(v, admitted[k]) for k, v in written.items()
        )
    if isinstance(written, list):
        return (
            isinstance(admitted, list)
            and len(written) == len(admitted)
            and all(kept(w, a) for w, a in zip(written, admitted, strict=True))
        )
    return bool(written == admitted)


def admitted(obj: dict[str, Any], crd: str) -> dict[str, Any]:
    result = Admission.from_paths([CRDS / crd]).admit(obj)
    assert not result.errors, [str(e) for e in result.errors]
    assert kept(obj, result.object)
    return result.object


def test_the_documented_pod_monitor_is_admitted_with_nothing_pruned() -> None:
    admitted(documented("PodMonitor"), "monitoring.coreos.com_podmonitors.yaml")


def test_the_documented_runtime_config_is_admitted_with_nothing_pruned() -> None:
    admitted(
        documented("DeploymentRuntimeConfig"), "pkg.crossplane.io_deploymentruntimeconfigs.yaml"
    )


def test_the_documented_function_is_admitted_with_nothing_pruned() -> None:
    admitted(documented("Function"), "pkg.crossplane.io_functions.yaml")


def test_a_misspelled_field_would_be_caught() -> None:
    # The check above is not vacuous: pruning drops what the CRD does not know.
    monitor = documented("PodMonitor")
    monitor["spec"]["podMetricEndpoints"] = monitor["spec"].pop("podMetricsEndpoints")
    result = Admission.from_paths([CRDS / "monitoring.coreos.com_podmonitors.yaml"]).admit(monitor)
    assert not kept(monitor, result.object)


def test_the_pod_monitor_selects_the_label_crossplane_gives_the_functions_pods() -> None:
    # podSelectors(), internal/controller/pkg/runtime/runtime.go (v2.3.4): a package's pods are
    # labelled "pkg.crossplane.io/" + packageType() ("function") with the package's name, the
    # Function object's, which for a dependency is its repository path as a DNS label.
    monitor = documented("PodMonitor")
    assert monitor["spec"]["selector"] == {
        "matchLabels": {"pkg.crossplane.io/function": dependency_name(FUNCTION["package"])}
    }
    # Without a namespaceSelector a PodMonitor selects pods of its own namespace: Crossplane's,
    # where it runs its packages (the getting-started guide installs it there).
    assert "namespaceSelector" not in monitor["spec"]
    assert monitor["metadata"]["namespace"] == "crossplane-system"


def test_the_pod_monitor_scrapes_the_port_crossplane_declares_for_metrics() -> None:
    # Deployment(), internal/controller/pkg/runtime/runtime.go (v2.3.4), adds the container
    # port MetricsPortName ("metrics"), MetricsPortNumber (8080), to every package's pod.
    [endpoint] = documented("PodMonitor")["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics"
    assert endpoint["path"] == "/metrics"


def test_serve_listens_by_default_on_the_port_crossplane_declares_for_metrics() -> None:
    # MetricsPortNumber = 8080, internal/controller/pkg/runtime/runtime.go (v2.3.4).
    from modelplane.cli import _serve_command

    [option] = [p for p in _serve_command().params if p.name == "metrics_address"]
    assert option.default == DEFAULT_ADDRESS
    assert split_address(DEFAULT_ADDRESS) == ("0.0.0.0", 8080)


def test_the_runtime_config_annotates_the_pod_as_crossplanes_chart_annotates_its_own() -> None:
    # DeploymentWithOptionalPodScrapeAnnotations (runtime_override_options.go) is applied by
    # runtime_provider.go only, never runtime_function.go (v2.3.4): a function's pod has no
    # scrape annotations unless its runtime config sets them, as the Helm chart sets them on
    # Crossplane's own pod (cluster/charts/crossplane/templates/deployment.yaml, metrics.enabled).
    template = documented("DeploymentRuntimeConfig")["spec"]["deploymentTemplate"]["spec"]
    assert template["template"]["metadata"]["annotations"] == {
        "prometheus.io/scrape": "true",
        "prometheus.io/port": str(split_address(DEFAULT_ADDRESS)[1]),
        "prometheus.io/path": "/metrics",
    }


def test_the_documented_function_is_the_dependency_naming_the_runtime_config() -> None:
    # NewPackage, internal/controller/pkg/resolver/reconciler.go (v2.3.4): the dependency is
    # created without a runtimeConfigRef (so the CRD's default, "default", applies) and an
    # existing package of that name is kept (IsAlreadyExists is ignored): only a Function
    # installed by hand under the dependency name, or patched, names another runtime config.
    function = documented("Function")
    assert function["metadata"]["name"] == dependency_name(FUNCTION["package"])
    assert function["spec"]["package"].rpartition(":")[0] == FUNCTION["package"]
    runtime = documented("DeploymentRuntimeConfig")["metadata"]["name"]
    assert function["spec"]["runtimeConfigRef"] == {"name": runtime}
    assert f'{{"spec":{{"runtimeConfigRef":{{"name":"{runtime}"}}}}}}' in section()


def test_a_dependency_installed_function_uses_the_default_runtime_config() -> None:
    # +kubebuilder:default={"name": "default"}, apis/pkg/v1/package_runtime_types.go (v2.3.4):
    # why the Function must name the runtime config itself.
    bare = {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Function",
        "metadata": {"name": dependency_name(FUNCTION["package"])},
        "spec": {"package": FUNCTION["package"] + ":v0.1.0"},
    }
    spec = admitted(bare, "pkg.crossplane.io_functions.yaml")["spec"]
    assert spec["runtimeConfigRef"]["name"] == "default"


def exported() -> set[str]:
    """The names of every metric `serve` exports, as a scrape shows them."""
    metrics = Metrics(d.kind for d in Definitions.default().definitions())
    metrics.watch(Pool(1, REGISTRY, MIB, debug=False))
    return {
        f"{f.name}_total" if f.type == "counter" else f.name
        for f in metrics.registry.collect()
        if f.name.startswith("modelplane_")
    }


def test_every_metric_served_is_documented_and_every_one_documented_is_served() -> None:
    rows = [line for line in section().splitlines() if line.startswith("| `modelplane_")]
    assert {re.match(r"\| `(\w+)`", row)[1] for row in rows} == exported()  # type: ignore[index]
