"""docs/getting-started.md cannot rot: every `modelplane` command in it runs and succeeds, every
manifest it applies exists and is admitted, every `kubectl wait` condition it names on a
Modelplane kind turns True when its manifests are rendered with ready workloads, and the
Crossplane version it installs is the one the Configuration requires."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml
from click.testing import CliRunner

from modelplane import cli
from modelplane.compose.registry import default_registry
from modelplane.render import api_server_admission, render_documents
from modelplane.simulate import simulate_observed

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "getting-started.md"
MANIFESTS = ROOT / "docs" / "getting-started"
_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)


def commands() -> list[str]:
    out: list[str] = []
    for block in _BLOCK.findall(GUIDE.read_text()):
        joined = block.replace("\\\n", " ")
        out += [line.strip() for line in joined.splitlines() if line.strip()]
    return out


def modelplane_commands() -> list[list[str]]:
    return [shlex.split(c)[3:] for c in commands() if c.startswith("uv run modelplane ")]


def test_every_modelplane_command_of_the_guide_succeeds() -> None:
    found = modelplane_commands()
    assert len(found) >= 4
    for args in found:
        out = CliRunner().invoke(cli.main, args)
        assert out.exit_code == 0, (args, out.output)


def test_the_tree_the_guide_promises_is_what_render_prints() -> None:
    out = CliRunner().invoke(
        cli.main, ["render", str(MANIFESTS), "-o", "tree", "--simulate-ready-copies", "1"]
    )
    assert out.stdout.splitlines()[-1].startswith("10 composites (10 ready)")
    assert "10 composites (10 ready)" in GUIDE.read_text()


def test_every_manifest_the_guide_applies_exists_and_is_admitted() -> None:
    applied = [shlex.split(c)[-1] for c in commands() if c.startswith("kubectl apply -f docs/")]
    assert applied
    for path in applied:
        assert (ROOT / path).is_file(), path
    out = CliRunner().invoke(cli.main, ["validate", *(str(ROOT / p) for p in applied)])
    assert out.exit_code == 0, out.output


def rendered_docs() -> list[dict]:
    """The guide's manifests rendered as if every workload had one ready copy."""
    inputs = [
        d for p in sorted(MANIFESTS.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d
    ]
    return render_documents(
        default_registry(),
        inputs,
        admit=api_server_admission(),
        simulate=lambda r: simulate_observed(r, ready_copies=1),
    )


def rendered() -> dict[tuple[str, str], dict]:
    return {
        (d["kind"].lower(), d["metadata"]["name"]): d
        for d in rendered_docs()
        if "status" in d and d.get("apiVersion", "").startswith("modelplane.ai/")
    }


def test_every_condition_the_guide_waits_for_turns_true() -> None:
    objects = rendered()
    waits = []
    for c in commands():
        words = shlex.split(c)
        if words[:1] != ["kubectl"] or "wait" not in words:
            continue
        target = words[words.index("wait") + 1]
        condition = words[words.index("--for") + 1].removeprefix("condition=")
        kind, _, name = target.partition("/")
        if "." not in kind:  # a Crossplane package (pkg.crossplane.io) needs a real cluster
            waits.append((kind, name, condition))
    assert len(waits) >= 10
    for kind, name, condition in waits:
        obj = objects[(kind, name)]
        status = {c["type"]: c["status"] for c in obj["status"]["conditions"]}
        assert status.get(condition) == "True", (kind, name, condition, status)


def test_the_guide_installs_the_crossplane_the_configuration_requires() -> None:
    meta = yaml.safe_load((ROOT / "package" / "configuration" / "crossplane.yaml").read_text())
    minimum = meta["spec"]["crossplane"]["version"].removeprefix(">=v")
    helm = next(c for c in commands() if c.startswith("helm install crossplane"))
    assert f"--version {minimum}" in helm
    assert f"Crossplane v{minimum} or later" in GUIDE.read_text()


def test_the_install_manifest_installs_the_configuration_the_guide_pushes() -> None:
    docs = list(yaml.safe_load_all((MANIFESTS / "install.yaml").read_text()))
    [configuration] = [d for d in docs if d["kind"] == "Configuration"]
    pushed = next(c for c in commands() if c.startswith("crossplane xpkg push -f configuration"))
    assert configuration["spec"]["package"] == shlex.split(pushed)[-1]


def test_the_final_curl_asks_the_path_the_front_route_matches_on_its_hostname() -> None:
    docs = rendered_docs()
    [front] = [
        d["spec"]["forProvider"]["manifest"]
        for d in docs
        if d.get("kind") == "Object"
        and d["metadata"]["annotations"].get("crossplane.io/composition-resource-name")
        == "front/main"
    ]
    [hostname] = front["spec"]["hostnames"]
    [prefix] = [m["path"]["value"] for r in front["spec"]["rules"] for m in r["matches"]]
    curl = next(c for c in commands() if c.startswith("curl "))
    url = next(w for w in shlex.split(curl) if w.startswith("https://"))
    assert url.startswith(f"https://{hostname}{prefix}")
