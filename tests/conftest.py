"""Suite-wide settings."""

from __future__ import annotations

import os
import tempfile

# Tests never share the user's cache (the CEL cost estimates of `modelplane validate`): each
# run starts from an empty one in a folder of its own, which subprocesses inherit.
os.environ["MODELPLANE_CACHE_DIR"] = tempfile.mkdtemp(prefix="modelplane-cache-")

from hypothesis import settings

from tests.properties import examples

# Properties that name no max_examples search as hard as the rest (tests/properties.py).
settings.register_profile("modelplane", max_examples=examples(100))
settings.load_profile("modelplane")
