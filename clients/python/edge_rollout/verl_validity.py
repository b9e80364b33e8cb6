"""Old name of ``edge_rollout.verl.validity`` (before issue 30), kept so imports from here still work; importing it warns once (``FutureWarning``) naming the new module.

It re-exports that module's public names (the same objects); new code imports from there.
"""
from ._old_names import warn_old_name
from .verl.validity import *  # noqa: F401,F403
from .verl.validity import __all__  # noqa: F401

warn_old_name("edge_rollout.verl_validity", "edge_rollout.verl.validity")
