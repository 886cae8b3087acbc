"""Suite-wide settings."""

from __future__ import annotations

import os
import tempfile

# Tests never share the user's cache (the CEL cost estimates of `modelplane validate`): each
# run starts from an empty one in a folder of its own, which subprocesses inherit.
os.environ["MODELPLANE_CACHE_DIR"] = tempfile.mkdtemp(prefix="modelplane-cache-")
