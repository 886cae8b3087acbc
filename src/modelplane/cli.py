"""The `modelplane` command line."""

from __future__ import annotations

from typing import Any

import click
from crossplane.function import cli as sdkcli

from modelplane.apis import ApisNotFoundError


class _Commands(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        # Without its API definitions no command can admit anything: say so in one line.
        try:
            return super().invoke(ctx)
        except ApisNotFoundError as e:
            click.echo(f"modelplane: {e}", err=True)
            raise SystemExit(2) from None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
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
@click.option(
    "--definitions",
    is_flag=True,
    help="Check every shipped definition (and --crd) against the API server's CEL cost budget.",
)
def validate(paths: tuple[str, ...], crds: tuple[str, ...], output: str, definitions: bool) -> None:
    """Validate manifests offline, as the API server would admit them."""
    from modelplane.validate import run, run_definitions

    if definitions:
        raise SystemExit(run_definitions(crds))
    if not paths:
        raise click.UsageError("give PATHS to validate, or --definitions")
    raise SystemExit(run(paths, crds, output))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
def explain(paths: tuple[str, ...]) -> None:
    """Show, per ModelDeployment in PATHS, every cluster and pool considered and why."""
    from modelplane.explain import explain_command

    raise SystemExit(explain_command(paths))
