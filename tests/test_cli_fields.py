"""`modelplane fields <kind>.<path>`: a field's documentation offline, kubectl explain style,
read from the same XRDs (and the same reading code) as docs/reference.md."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from modelplane import cli
from modelplane.fields import find, kinds

ROOT = Path(__file__).resolve().parents[1]


def fields(query: str) -> Result:
    return CliRunner().invoke(cli.main, ["fields", query])


def test_a_field_is_shown_with_its_kind_type_and_description() -> None:
    out = fields("modeldeployment.spec.replicas")
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[:3] == [
        "KIND:     ModelDeployment",
        "GROUP:    modelplane.ai",
        "VERSION:  v1alpha1",
    ]
    assert "FIELD: spec.replicas <integer>" in lines
    assert "How many ModelReplicas to place" in out.stdout


def test_a_field_shows_its_default_and_constraints() -> None:
    out = fields("modeldeployment.spec.drain.preStopSeconds")
    assert "DEFAULT: 30" in out.stdout.splitlines()
    constraints = out.stdout.partition("CONSTRAINTS:\n")[2].splitlines()
    assert constraints[:2] == ["    min 0", "    max 3600"]


def test_a_field_lists_the_fields_below_it_marking_the_required() -> None:
    out = fields("modeldeployment.spec.drain")
    below = out.stdout.partition("FIELDS:\n")[2]
    assert "  terminationGracePeriodSeconds\t<integer>\n" in below
    assert "  preStopSeconds\t<integer>\n" in below
    assert "drain.preStopSeconds must be less than" in out.stdout
    assert "  template\t<object> -required-" in fields("modeldeployment.spec").stdout


def test_array_entries_are_reached_without_brackets() -> None:
    out = fields("inferencecluster.spec.nodePools.className")
    assert out.exit_code == 0, out.output
    assert "FIELD: spec.nodePools.className <string>" in out.stdout


def test_a_kind_is_named_by_its_plural_or_short_name_in_any_case() -> None:
    expected = fields("ModelDeployment.spec.replicas").stdout
    assert fields("modeldeployments.spec.replicas").stdout == expected
    assert fields("md.spec.replicas").stdout == expected


def test_a_kind_alone_shows_its_description_and_top_level_fields() -> None:
    out = fields("modelservice")
    assert out.exit_code == 0
    assert "FIELD:" not in out.stdout
    assert "One address for a model across the fleet" in out.stdout
    assert out.stdout.partition("FIELDS:\n")[2].split() == [
        "spec",
        "<object>",
        "-required-",
        "status",
        "<object>",
    ]


def test_an_unknown_kind_is_one_line_naming_it_with_a_suggestion_exit_1() -> None:
    out = fields("modeldeploymnet.spec.replicas")
    assert out.exit_code == 1
    assert out.stdout == ""
    assert out.stderr == (
        "modelplane fields: no kind modeldeploymnet in the API definitions "
        "(did you mean modeldeployment?)\n"
    )


def test_an_unknown_field_is_one_line_naming_it_with_a_suggestion_exit_1() -> None:
    out = fields("modeldeployment.spec.replica")
    assert out.exit_code == 1
    assert out.stderr == (
        "modelplane fields: ModelDeployment has no field spec.replica "
        "(did you mean spec.replicas?)\n"
    )


def test_a_field_spelt_like_nothing_names_what_its_parent_has() -> None:
    out = fields("modeldeployment.spec.zzzzzzzz")
    assert out.exit_code == 1
    assert out.stderr == (
        "modelplane fields: ModelDeployment has no field spec.zzzzzzzz "
        "(spec has replicas, autoscaling, drain, rollout, template)\n"
    )


def test_every_field_of_the_reference_can_be_looked_up() -> None:
    reference = (ROOT / "docs" / "reference.md").read_text()
    known = kinds(ROOT / "apis")
    for kind in known:
        for field in kind.root.walk():
            assert f"| `{field.path}` | {field.type} |" in reference, field.path
            assert find(f"{kind.kind.lower()}.{field.path}", known) == (kind, field)
