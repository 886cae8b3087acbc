"""The `modelplane` command line."""

from __future__ import annotations

import click
from crossplane.function import cli as sdkcli


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Modelplane: place models on GPU fleets and compose their serving stacks."""


@main.command()
# The SDK's standard options (names and environment variables as Crossplane's runtime sets
# them), with message limits sized for fleets and the number of composing workers.
@click.option("--debug", "-d", is_flag=True, envvar="DEBUG", help="Emit debug logs.")
@click.option(
    "--address",
    default=sdkcli.DEFAULT_ADDRESS,
    show_default=True,
    envvar="ADDRESS",
    help="Address at which to listen for gRPC connections.",
)
@click.option(
    "--tls-server-certs-dir",
    "--tls-certs-dir",
    "tls_certs_dir",
    envvar="TLS_SERVER_CERTS_DIR",
    help="Serve using mTLS certificates (tls.crt, tls.key, ca.crt).",
)
@click.option("--insecure", is_flag=True, envvar="INSECURE", help="Run without mTLS credentials.")
@click.option(
    "--max-recv-message-size",
    "--max-grpc-message-size",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    envvar=["MAX_RECV_MESSAGE_SIZE", "MAX_GRPC_MESSAGE_SIZE"],
    help="Largest request accepted, in MiB (a 1,000-cluster fleet's is about 12).",
)
@click.option(
    "--max-send-message-size",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    envvar="MAX_SEND_MESSAGE_SIZE",
    help="Largest response sent, in MiB; larger is a Fatal result (Crossplane receives 4).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    envvar="WORKERS",
    help="Processes composing requests.  [default: the CPUs available]",
)
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
