"""Suite-wide settings."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

# Tests never share the user's cache (the CEL cost estimates of `modelplane validate`): each
# run starts from an empty one in a folder of its own, which subprocesses inherit.
os.environ["MODELPLANE_CACHE_DIR"] = tempfile.mkdtemp(prefix="modelplane-cache-")

import pytest
import yaml
from hypothesis import settings

from tests.budget import TEST_BUDGET_SECONDS, within_budget
from tests.properties import examples

# The tests read the vendored upstream CRDs (4 MB of YAML) in many modules with yaml.safe_load:
# libyaml's loader reads the same documents about nine times faster, as src/ already does
# (manifests.py, kube/crd.py); a machine without libyaml keeps the Python loader.
if hasattr(yaml, "CSafeLoader"):
    yaml.safe_load = lambda stream: yaml.load(stream, Loader=yaml.CSafeLoader)  # type: ignore[assignment]

# Properties that name no max_examples search as hard as the rest (tests/properties.py).
settings.register_profile("modelplane", max_examples=examples(100))
settings.load_profile("modelplane")


# --- a time budget per test ----------------------------------------------------------------------
# One unlucky property example once hung a full CI run. Every test but the e2e tier's (whose
# waits are bounded one by one) gets a budget (tests/budget.py): past it the test fails, naming
# the budget, and the run goes on.


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("e2e"):
        return (yield)
    with within_budget(TEST_BUDGET_SECONDS, item.nodeid):
        return (yield)
