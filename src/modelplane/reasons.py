"""Every condition type and reason Modelplane sets, as named constants per kind.

docs/troubleshooting.md's reason tables are generated from this module.
"""

from __future__ import annotations
