"""Field errors print as the API server prints them."""

from __future__ import annotations

from typing import Any

import pytest

from modelplane.kube.errors import ErrorType, FieldError, Key, render_path


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (FieldError("spec.a", ErrorType.REQUIRED), "spec.a: Required value"),
        (
            FieldError("spec.a", ErrorType.INVALID, "object", "msg"),
            'spec.a: Invalid value: "object": msg',
        ),
        (
            FieldError("spec.a", ErrorType.INVALID, 70000, "msg"),
            "spec.a: Invalid value: 70000: msg",
        ),
        (FieldError("spec.a", ErrorType.INVALID, True, "msg"), "spec.a: Invalid value: true: msg"),
        (FieldError("<nil>", ErrorType.INVALID, None, "msg"), '<nil>: Invalid value: "null": msg'),
        (
            FieldError("spec.a", ErrorType.TOO_LONG, "xxxx", "may not be more than 3 bytes"),
            "spec.a: Too long: may not be more than 3 bytes",
        ),
        (
            FieldError("spec.a[1]", ErrorType.DUPLICATE, {"name": "a", "port": 80}),
            'spec.a[1]: Duplicate value: map[string]interface {}{"name":"a", "port":80}',
        ),
        (FieldError("spec.a", ErrorType.FORBIDDEN, detail="no"), "spec.a: Forbidden: no"),
        (FieldError("spec.x", ErrorType.UNKNOWN_FIELD), 'unknown field "spec.x"'),
    ],
)
def test_renders_like_apimachinery(error: FieldError, text: str) -> None:
    assert str(error) == text


@pytest.mark.parametrize(
    ("path", "brackets", "text"),
    [
        ((), False, "<nil>"),
        (("spec", "engines", 0, "name"), False, "spec.engines[0].name"),
        (("spec", "labels", Key("a/b")), False, "spec.labels.a/b"),
        (("spec", "labels", Key("a/b")), True, "spec.labels[a/b]"),
    ],
)
def test_paths(path: tuple[Any, ...], brackets: bool, text: str) -> None:
    assert render_path(path, keys_in_brackets=brackets) == text
