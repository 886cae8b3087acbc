from modelplane.compose.shared.evidence import look_up_unlisted
from modelplane.composer import Inputs


def _named(name: str) -> dict:
    return {"metadata": {"name": name}}


def test_only_the_names_the_list_does_not_hold_are_asked_for_by_name():
    inputs = Inputs(composite={}, required={"by-name/ns/b": [_named("b")]})

    lookup = look_up_unlisted(
        inputs, "by-name", "v1", "Thing", ["a", "b", "c"], [_named("a")], "ns"
    )

    assert sorted(r.match_name or "" for r in lookup.requirements.values()) == ["b", "c"]
    assert lookup.found == {"b": _named("b")}
    assert lookup.pending == {"c"}
