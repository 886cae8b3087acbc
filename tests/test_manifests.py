"""Reading manifests as kubectl and the API server read them: lines, encodings, alias bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from modelplane import manifests
from modelplane.manifests import ManifestError


def laughs(levels: int, fanout: int) -> str:
    """A "billion laughs": each level an anchored list of ``fanout`` aliases of the one below."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * fanout)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fanout)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def parse(text: str) -> list[manifests.Manifest]:
    return manifests.parse(text, "f.yaml")


def test_a_yaml_bomb_is_refused_naming_the_file_and_line() -> None:
    # 9 levels of 9: 435 million nodes once expanded, from 90 written; refused before any
    # is built (admission would walk every one of them).
    with pytest.raises(ManifestError) as refused:
        parse("apiVersion: v1\nkind: ConfigMap\n" + laughs(9, 9))
    assert str(refused.value).startswith(
        "f.yaml:1: not valid YAML: document contains excessive aliasing"
    )


def test_aliases_within_go_yamls_budget_are_accepted() -> None:
    # 3 levels of 10 expand to 1,111 nodes, 99% of them through aliases: go-yaml accepts it.
    [doc] = parse(laughs(2, 10) + "kind: X\n")
    assert len(doc.obj["l2"]) == 10


def test_one_more_level_of_aliases_is_refused_as_go_yaml_refuses_it() -> None:
    with pytest.raises(ManifestError, match="excessive aliasing"):
        parse(laughs(3, 10))


def test_merge_keys_count_against_the_alias_budget() -> None:
    lines = ["m0: &m0 {" + ", ".join(f"k{i}: v" for i in range(10)) + "}"]
    lines += [f"m{i}: &m{i} [{', '.join([f'*m{i - 1}'] * 10)}]" for i in range(1, 4)]
    lines += ["top: {<<: [*m0], x: *m3}"]
    with pytest.raises(ManifestError, match="excessive aliasing"):
        parse("\n".join(lines) + "\n")


def test_an_anchor_that_contains_itself_is_refused() -> None:
    with pytest.raises(ManifestError, match=r"f\.yaml:1: .*contains an alias of itself"):
        parse("a: &x [1, *x]\n")


def test_deep_nesting_is_refused_as_invalid_yaml() -> None:
    with pytest.raises(ManifestError, match=r"f\.yaml:1: not valid YAML: .*nesting depth"):
        parse("a: " + "[" * 5000 + "]" * 5000 + "\n")


def test_a_yaml_error_names_the_line_of_the_problem() -> None:
    with pytest.raises(ManifestError) as refused:
        parse("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: [1, 2\n")
    assert str(refused.value) == (
        "f.yaml:5: not valid YAML: did not find expected ',' or ']' "
        "(while parsing a flow sequence at line 4)"
    )


def test_a_duplicate_key_names_both_lines() -> None:
    with pytest.raises(ManifestError) as refused:
        parse("apiVersion: v1\nkind: ConfigMap\nkind: Secret\n")
    assert str(refused.value) == (
        'f.yaml:3: not valid YAML: mapping key "kind" already defined at line 2'
    )


def test_a_file_that_is_not_utf8_is_refused_at_its_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("kind: ConfigMap\ndata: {a: café}\n".encode("latin-1"))
    with pytest.raises(ManifestError) as refused:
        manifests.load([str(path)])
    assert str(refused.value) == (
        f"{path}:2: not UTF-8 text: byte 0xe9 at offset 29 is not text "
        "(manifests are YAML or JSON in UTF-8)"
    )


def test_utf16_with_a_byte_order_mark_is_read_as_go_yaml_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "utf16.yaml"
    path.write_bytes("kind: ConfigMap\nmetadata: {name: é}\n".encode("utf-16"))
    [doc] = manifests.load([str(path)])
    assert doc.obj["metadata"]["name"] == "é"


def test_a_control_character_is_refused_naming_its_line() -> None:
    with pytest.raises(ManifestError) as refused:
        parse("kind: X\ndata: a\x00b\n")
    assert str(refused.value) == (
        "f.yaml:2: not valid YAML: character #x0000 is not allowed: "
        "control characters are not allowed"
    )


def test_each_object_knows_the_line_it_starts_on() -> None:
    docs = parse("kind: A\n---\n# a comment\nkind: B\n---\nkind: List\nitems:\n- kind: C\n")
    assert [(d.obj["kind"], d.line) for d in docs] == [("A", 1), ("B", 4), ("C", 8)]


def test_a_field_path_is_found_on_its_own_line() -> None:
    [doc] = parse("kind: X\nspec:\n  engines:\n  - name: a\n  - name: b\n    copies: 2\n")
    assert doc.where_is("spec.engines[1].copies") == "f.yaml:6"
    # A path the YAML does not write (a default, a missing field) falls back to its parent.
    assert doc.where_is("spec.engines[1].members") == "f.yaml:5"
    assert doc.where_is("<nil>") == "f.yaml:1"


def test_a_document_that_is_not_an_object_is_refused_naming_it() -> None:
    with pytest.raises(ManifestError) as refused:
        parse("kind: A\n---\n- a\n- b\n")
    assert str(refused.value) == "f.yaml:3: document 2 is not a Kubernetes object (it is a list)"


def test_a_missing_path_is_named() -> None:
    with pytest.raises(ManifestError) as refused:
        manifests.load(["nope/none.yaml"])
    assert str(refused.value) == "nope/none.yaml: no such file or directory"
