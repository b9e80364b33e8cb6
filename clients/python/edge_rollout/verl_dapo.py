"""Old name of ``edge_rollout.verl.dapo`` (before issue 30), kept so imports from here still work.

It re-exports that module's public names (the same objects); new code imports from there.
"""
from .verl.dapo import *  # noqa: F401,F403
from .verl.dapo import __all__  # noqa: F401
