"""The `modelplane` command line.

Start-up matters: ``--help``, ``validate`` and ``explain`` import neither gRPC nor the Crossplane
SDK. ``serve`` builds its command (the SDK's standard options) only when it is run, and each
command imports its module only when it runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from modelplane import exits


def _version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import PackageNotFoundError, version

    from modelplane.apis import API_VERSION

    try:
        package = version("modelplane")
    except PackageNotFoundError:
        package = "unknown"
    click.echo(f"modelplane {package} (serves ModelReplica {API_VERSION})")
    ctx.exit()


class _Commands(click.Group):
    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.ClickException as e:
            # Click prints usage errors over three lines; every other error here is one line
            # in one format (README), so a script can read them the same way.
            ctx = getattr(e, "ctx", None)
            sub = ctx.command_path.split(" ")[1:] if ctx is not None else []
            path = " ".join(["modelplane", *sub])
            hint = f" (see '{path} --help')" if isinstance(e, click.UsageError) else ""
            click.echo(f"{path}: {e.format_message()}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        # Without its API definitions no command can admit anything: say so in one line.
        from modelplane.apis import ApisNotFoundError

        try:
            return super().invoke(ctx)
        except ApisNotFoundError as e:
            exits.error(ctx.invoked_subcommand or "", str(e))
            raise SystemExit(exits.UNREADABLE) from None


@click.group(
    cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]}, epilog=exits.HELP
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Print the version and the ModelReplica API version served, then exit.",
)
def main() -> None:
    """Modelplane: place models on GPU fleets and compose their serving stacks."""


def _output(choices: list[str], help_text: str) -> Any:
    """The -o/--output option of the commands that print: one of ``choices``, the first the
    default."""
    return click.option(
        "-o",
        "--output",
        type=click.Choice(choices),
        default=choices[0],
        show_default=True,
        help=help_text,
    )


@main.command(
    short_help="Run the composition function Crossplane calls (gRPC).",
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
)
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Run the Crossplane composition function (gRPC, mTLS unless --insecure)."""
    # Its options are the SDK's: building them imports gRPC, which nothing else here needs.
    _serve_command().main(ctx.args, prog_name=ctx.command_path, standalone_mode=True)


def _serve_command() -> click.Command:
    from crossplane.function import cli as sdkcli

    from modelplane.metrics import DEFAULT_ADDRESS as DEFAULT_METRICS_ADDRESS

    @click.command(
        name="serve", context_settings={"help_option_names": ["-h", "--help"]}, epilog=exits.HELP
    )
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
    @click.option(
        "--insecure", is_flag=True, envvar="INSECURE", help="Run without mTLS credentials."
    )
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
        "--max-inflight-size",
        type=click.IntRange(min=1),
        default=None,
        envvar="MAX_INFLIGHT_SIZE",
        help="Requests held at once, composing or waiting for a worker, summed, in MiB; past it "
        "a call is refused RESOURCE_EXHAUSTED (one alone is always taken).  "
        "[default: 64, or --max-recv-message-size if larger]",
    )
    @click.option(
        "--max-concurrent-rpcs",
        type=click.IntRange(min=1),
        default=32,
        show_default=True,
        envvar="MAX_CONCURRENT_RPCS",
        help="Calls taken at once; a connection's further calls wait in its client, another "
        "connection's are refused RESOURCE_EXHAUSTED before their message is read.",
    )
    @click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=None,
        envvar="WORKERS",
        help="Processes composing requests.  [default: the CPUs available]",
    )
    @click.option(
        "--metrics-address",
        default=DEFAULT_METRICS_ADDRESS,
        show_default=True,
        envvar="METRICS_ADDRESS",
        help="Address serving Prometheus metrics over HTTP at /metrics (8080 is the port "
        "Crossplane declares as `metrics` on the function's pod); empty serves none.",
    )
    @click.option(
        "--metrics-port",
        type=click.IntRange(min=0, max=65535),
        default=None,
        envvar="METRICS_PORT",
        help="Serve the metrics on this port of --metrics-address's host instead; 0 serves none.",
    )
    def command(**options: Any) -> None:
        """Run the Crossplane composition function (gRPC, mTLS unless --insecure)."""
        from modelplane.serve import serve as run

        run(**options)

    return command


@main.command(
    short_help="Run compositions in process and print what they compose.", epilog=exits.HELP
)
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
@_output(
    ["yaml", "json", "name", "tree"],
    "yaml: the crossplane render stream; json: a v1 List; name: kind.group/name per "
    "object, as kubectl prints it; tree: one line per composite and composed resource.",
)
@click.option(
    "-r",
    "--include-function-results",
    "results",
    is_flag=True,
    help="Print the function's Result documents (its warnings and messages) after each "
    "composite's resources, as crossplane render -r does (yaml, json).",
)
@click.option(
    "--show-usages",
    is_flag=True,
    help="Show Crossplane's Usages in the tree (-o tree hides them and counts them).",
)
def render(
    paths: tuple[str, ...],
    observed: tuple[str, ...],
    ready_copies: int | None,
    output: str,
    results: bool,
    show_usages: bool,
) -> None:
    """Run every composition in PATHS to a fixed point and print the result.

    PATHS are YAML or JSON files, directories (searched recursively) or - for standard input.
    """
    from modelplane.render import Shown, render_command

    shown = Shown(results=results, usages=show_usages)
    raise SystemExit(render_command(paths, observed, output, ready_copies, shown))


@main.command(short_help="Validate manifests offline, as the API server would.", epilog=exits.HELP)
@click.argument("paths", nargs=-1, type=click.Path(allow_dash=True))
@click.option(
    "--crd",
    "crds",
    multiple=True,
    type=click.Path(),
    help="A CRD or XRD file or directory to validate against too (repeatable).",
)
@_output(
    ["errors", "defaulted"],
    "errors: one line per error; defaulted: print the pruned, defaulted objects.",
)
@click.option(
    "--definitions",
    is_flag=True,
    help="Check every shipped definition (and --crd) against the API server's CEL cost budget.",
)
def validate(paths: tuple[str, ...], definitions: bool, **options: Any) -> None:
    """Validate manifests offline, as the API server would admit them.

    PATHS are YAML or JSON files, directories (searched recursively) or - for standard input.
    """
    from modelplane.validate import run, run_definitions

    if definitions:
        raise SystemExit(run_definitions(options["crds"]))
    if not paths:
        raise click.UsageError("give PATHS to validate, or --definitions")
    raise SystemExit(run(paths, **options))


@main.command(short_help="Say where each deployment's replicas go, and why.", epilog=exits.HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@_output(
    ["text", "json"],
    "text: per deployment, every cluster and why; json: the same facts, structured.",
)
@click.option(
    "--deployment",
    metavar="NS/NAME",
    default=None,
    help="Explain only this ModelDeployment (NAME alone: in any namespace).",
)
def explain(paths: tuple[str, ...], output: str, deployment: str | None) -> None:
    """Show, per ModelDeployment in PATHS, every cluster and pool considered and why.

    PATHS are YAML or JSON files, directories (searched recursively) or - for standard input.
    """
    from modelplane.explain import explain_command

    raise SystemExit(explain_command(paths, output, deployment))


@main.command(short_help="Print each ModelService's routing table.", epilog=exits.HELP)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option(
    "--simulate-ready-copies",
    "ready_copies",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Render as if every composed workload had N ready copies.",
)
@_output(
    ["text", "json", "yaml"], "text: a table per service; json, yaml: the same facts, structured."
)
def routes(paths: tuple[str, ...], ready_copies: int, output: str) -> None:
    """Show each ModelService's routing table: gateway, endpoint, cluster, weight, share."""
    from modelplane.routes import routes_command

    raise SystemExit(routes_command(paths, ready_copies, output))


@main.command(short_help="Describe a kind's field, offline.", epilog=exits.HELP)
@click.argument("field", metavar="KIND[.FIELD]")
def fields(field: str) -> None:
    """Describe a field of a Modelplane kind: type, default, constraints, description and the
    fields below it, from the same API definitions as docs/reference.md.

    KIND is any of the kind's names (modeldeployment, modeldeployments, md); FIELD is a path
    from the object's root, as kubectl explain takes it: modeldeployment.spec.replicas.
    """
    from modelplane.apis import apis_dir
    from modelplane.fields import FieldNotFoundError, describe, find, kinds

    try:
        kind, found = find(field, kinds(apis_dir()))
    except FieldNotFoundError as e:
        exits.error("fields", str(e))
        raise SystemExit(exits.INVALID) from None
    click.echo(describe(kind, found), nl=False)


def _checked(check: str) -> Any:
    """A click callback running ``modelplane.usage.<check>`` on the value: its ValueError
    becomes click's error naming the option."""

    def callback(_: click.Context, __: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        from modelplane import usage as module

        try:
            return str(getattr(module, check)(value))
        except ValueError as e:
            raise click.BadParameter(str(e)) from None

    return callback


@main.command(
    short_help="Tokens and requests per caller and model, from Prometheus.", epilog=exits.HELP
)
@click.argument(
    "service", metavar="NAMESPACE/SERVICE", required=False, callback=_checked("service")
)
@click.option("--all", "every", is_flag=True, help="Every ModelService, not one.")
@click.option(
    "--prometheus",
    metavar="URL",
    envvar="MODELPLANE_PROMETHEUS",
    callback=_checked("prometheus_url"),
    help="The fleet-wide Prometheus (the modelplane-autoscaling EnvironmentConfig's "
    "prometheus.serverAddress).  [env: MODELPLANE_PROMETHEUS]",
)
@click.option(
    "--window",
    metavar="DURATION",
    default="1h",
    show_default=True,
    callback=_checked("window"),
    help="How far back to count, a Prometheus duration (30m, 1h, 1d).",
)
@click.option(
    "--price-input",
    type=click.FloatRange(min=0),
    default=None,
    help="Price of a million input tokens: adds a COST column (an unset price counts 0).",
)
@click.option(
    "--price-output",
    type=click.FloatRange(min=0),
    default=None,
    help="Price of a million output tokens: adds a COST column (an unset price counts 0).",
)
@_output(
    ["text", "json"],
    "text: a table, the top 20 callers by tokens and the others summed; json: the same.",
)
@click.pass_context
def usage(
    ctx: click.Context,
    service: str | None,
    every: bool,
    prometheus: str | None,
    window: str,
    price_input: float | None,
    price_output: float | None,
    output: str,
) -> None:
    """Show a ModelService's usage (or --all's) over the last --window: input and output tokens
    and requests per caller and model, as the front door's AI Gateway counted them.

    Read-only: it asks the fleet-wide Prometheus the queries of docs/operations.md ("Usage and
    cost by caller"). Only requests by model name are counted, and per caller only on a gateway
    with spec.auth. "No usage recorded" exits 0; Prometheus not reached, or refusing, exits 2.
    """
    import time

    from modelplane.usage import Asked, Prices, usage_command

    if (service is None) == (not every):
        said = "or --all, not both" if every else "or --all for every ModelService"
        raise click.UsageError(f"give NAMESPACE/SERVICE {said}", ctx)
    if prometheus is None:
        raise click.UsageError(
            "give --prometheus URL or set MODELPLANE_PROMETHEUS: the fleet-wide Prometheus", ctx
        )
    priced = price_input is not None or price_output is not None
    prices = Prices(price_input or 0.0, price_output or 0.0) if priced else None
    asked = Asked(prometheus, window, service, time.time())
    raise SystemExit(usage_command(asked, output, prices))
