"""The module names ``edge_rollout`` had before ``edge_rollout.verl`` became a package (issue 30):
kept working, and saying once, when first imported, what to import instead."""
from __future__ import annotations

import warnings


def warn_old_name(old: str, new: str) -> None:
    """Warns (``FutureWarning``: shown to users by default, unlike ``DeprecationWarning`` outside
    ``__main__``) that module ``old`` is deprecated and names ``new``. A module body runs once per
    process, so each old name warns once."""
    warnings.warn(f"{old} is deprecated and will be removed: import {new} instead (same objects)",
                  FutureWarning, stacklevel=3)
