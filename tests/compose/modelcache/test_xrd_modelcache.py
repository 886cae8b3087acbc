"""ModelCache admission: a HuggingFace cache says which repo to stage."""

from __future__ import annotations

from tests.fleet.xrd import errors, rule_error

CACHE = {
    "apiVersion": "modelplane.ai/v1alpha1",
    "kind": "ModelCache",
    "metadata": {"name": "qwen-weights", "namespace": "ml"},
    "spec": {"source": "HuggingFace", "huggingFace": {"repo": "Qwen/Qwen3-8B", "sizeGiB": 20}},
}


def test_a_hugging_face_cache_is_admitted() -> None:
    assert errors("modelcaches", CACHE) == []


def test_a_hugging_face_cache_names_its_repo() -> None:
    cache = {**CACHE, "spec": {"source": "HuggingFace"}}
    assert errors("modelcaches", cache) == [
        rule_error("spec", "source HuggingFace requires huggingFace with the repo and sizeGiB")
    ]
