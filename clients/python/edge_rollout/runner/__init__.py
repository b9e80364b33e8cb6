"""Runners: run Python agents on external rollouts claimed from an edge-rollout deployment.

The shapes are Agent-lightning's: a ``@rollout`` function or a ``LitAgent`` class
(``training_rollout`` / ``validation_rollout``), resources injected (``llm`` bound to the attempt,
named resources), ``emit_reward`` / ``emit_message`` / ``emit_object`` / ``emit_exception``.
``Runner`` runs ``n_runners`` workers in one process; the command line is::

    python -m edge_rollout.runner module:agent --url http://127.0.0.1:8787 --agent NAME --runners 8

Rollouts of ``external:NAME`` (single or in batches) are offered to runners serving ``NAME``;
those of plain ``external`` batches to runners serving ``external``.
"""
from .agents import FunctionAgent, LitAgent, RolloutInfo, load_agent, rollout
from .emitters import emit_exception, emit_message, emit_object, emit_reward
from .llm import LLM, text_of
from .pool import Runner, RunnerStats

__all__ = ["Runner", "RunnerStats", "LitAgent", "FunctionAgent", "RolloutInfo", "rollout", "load_agent", "LLM", "text_of",
           "emit_reward", "emit_message", "emit_object", "emit_exception"]
