"""The kubelet expansion helper behaves as Kubernetes documents ``$(VAR)``."""

from __future__ import annotations

from tests.conformance.expansion import command_line, environment, expand


def known(name: str) -> str | None:
    return {"A": "a", "B": "b"}.get(name)


def test_a_known_reference_is_replaced():
    assert expand("x-$(A)-$(B)", known) == "x-a-b"


def test_an_unknown_reference_stays_as_written():
    assert expand("$(C)/$(A)", known) == "$(C)/a"


def test_a_doubled_dollar_is_one_literal_dollar():
    assert expand("$$(A)", known) == "$(A)"


def test_an_unclosed_reference_and_a_lone_dollar_are_kept():
    assert expand("$(A", known) == "$(A"
    assert expand("$x $", known) == "$x $"


def test_env_reads_only_variables_defined_before_it():
    env = [
        {"name": "EARLY", "value": "$(LATE)-$(FIRST)"},
        {"name": "FIRST", "value": "1"},
        {"name": "LATE", "value": "2"},
        {"name": "AFTER", "value": "$(FIRST)$(LATE)"},
    ]
    resolved = environment(env, {})
    assert resolved["EARLY"] == "$(LATE)-$(FIRST)"
    assert resolved["AFTER"] == "12"


def test_label_field_references_resolve_and_a_missing_label_is_empty():
    ref = {"fieldRef": {"fieldPath": "metadata.labels['k']"}}
    env = [{"name": "K", "valueFrom": ref}, {"name": "M", "valueFrom": ref}]
    assert environment(env, {"k": "v"}) == {"K": "v", "M": "v"}
    assert environment(env, {}) == {"K": "", "M": ""}


def test_args_expand_against_the_whole_environment():
    container = {"command": ["sh", "-c"], "args": ["run --at=$(LATE)"]}
    assert command_line(container, {"LATE": "x"}) == ["sh", "-c", "run --at=x"]
