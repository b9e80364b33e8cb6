"""Agent harnesses (Claude Code, Codex, opencode) as rollouts: tasks in Harbor's layout, a workspace per rollout,
the CLI with no network but the gateway, the task's check as the reward.

    python -m edge_rollout.harness --url http://127.0.0.1:8787 --tasks examples/harness-tasks \\
        --agent claude-code --agent codex --agent opencode --runners 6
"""
from .agent import HarnessAgent, gateway_base, task_id_of
from .tasks import HarnessTask, TaskError, list_dataset, load_task, resolve_task
from .workspace import open_workspace, run_check

__all__ = ["HarnessAgent", "HarnessTask", "TaskError", "gateway_base", "list_dataset", "load_task", "open_workspace",
           "resolve_task", "run_check", "task_id_of"]
