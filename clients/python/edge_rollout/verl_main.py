"""``python3 -m edge_rollout.verl_main``: the old name (before issue 30) of ``python3 -m edge_rollout.verl.main``,
kept because verl users run it; the same ``main``.
"""
from ._old_names import warn_old_name
from .verl.main import *  # noqa: F401,F403
from .verl.main import __all__, main  # noqa: F401

warn_old_name("edge_rollout.verl_main", "edge_rollout.verl.main")

if __name__ == "__main__":
    main()
