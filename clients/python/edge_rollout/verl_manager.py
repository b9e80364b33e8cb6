"""Old name of ``edge_rollout.verl.agent_loop_manager`` (before issue 30), kept because verl configs
name ``edge_rollout.verl_manager.EdgeRolloutAgentLoopManager`` as ``agent_loop_manager_class``.

It re-exports that module's public names (the same objects); new code imports from there.
"""
from ._old_names import warn_old_name
from .verl.agent_loop_manager import *  # noqa: F401,F403
from .verl.agent_loop_manager import __all__  # noqa: F401

warn_old_name("edge_rollout.verl_manager", "edge_rollout.verl.agent_loop_manager")
