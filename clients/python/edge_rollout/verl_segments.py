"""Old name of ``edge_rollout.verl.drift_segments`` (before issue 30), kept so imports from here still work.

It re-exports that module's public names (the same objects); new code imports from there.
"""
from .verl.drift_segments import *  # noqa: F401,F403
from .verl.drift_segments import __all__  # noqa: F401
