"""The `modelplane` command line."""

from __future__ import annotations

import click
from crossplane.function import cli as sdkcli


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Modelplane: place models on GPU fleets and compose their serving stacks."""


@main.command()
@sdkcli.standard_options
def serve(**options: object) -> None:
    """Run the Crossplane composition function (gRPC, mTLS unless --insecure)."""
    from modelplane.serve import serve as run

    run(**options)  # type: ignore[arg-type]


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--observed-resources",
    "observed",
    multiple=True,
    type=click.Path(exists=True),
    help="YAML of observed composed resources (annotated crossplane.io/composition-resource-name).",
)
@click.option(
    "--simulate-ready-copies",
    "ready_copies",
    type=click.IntRange(min=0),
    default=None,
    help="Observe every composed workload as if N copies were ready (0: none ready yet).",
)
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml")
def render(
    paths: tuple[str, ...], observed: tuple[str, ...], ready_copies: int | None, output: str
) -> None:
    """Run every composition in PATHS to a fixed point and print the result."""
    from modelplane.render import render_command

    raise SystemExit(render_command(paths, observed, output, ready_copies))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--crd",
    "crds",
    multiple=True,
    type=click.Path(),
    help="A CRD or XRD file or directory to validate against too (repeatable).",
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["errors", "defaulted"]),
    default="errors",
    help="errors: one line per error; defaulted: print the pruned, defaulted objects.",
)
def validate(paths: tuple[str, ...], crds: tuple[str, ...], output: str) -> None:
    """Validate manifests offline, as the API server would admit them."""
    from modelplane.validate import run

    raise SystemExit(run(paths, crds, output))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
def explain(paths: tuple[str, ...]) -> None:
    """Show, per ModelDeployment in PATHS, every cluster and pool considered and why."""
    from modelplane.explain import explain_command

    raise SystemExit(explain_command(paths))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--simulate-ready-copies",
    "ready_copies",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Render as if every composed workload had N ready copies.",
)
def routes(paths: tuple[str, ...], ready_copies: int) -> None:
    """Show each ModelService's routing table: gateway, endpoint, cluster, weight, share."""
    from modelplane.routes import routes_command

    raise SystemExit(routes_command(paths, ready_copies))
