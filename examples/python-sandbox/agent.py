"""A Python agent with a tool that runs in a subprocess (a stand-in for a sandbox), run by edge_rollout.runner.

Run it against a deployment (local stack: ``npx edge-rollout dev``)::

    PYTHONPATH=clients/python python3 -m edge_rollout.runner examples/python-sandbox/agent.py:SandboxCalculator \\
        --url http://127.0.0.1:8787 --agent sandbox-calculator --runners 8

and give it work: ``POST /v1/batches {"agent": "external:sandbox-calculator", "rows": [...], "n": 4}``.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from edge_rollout.runner import LitAgent, emit_object, emit_reward, text_of

SANDBOX = Path(__file__).with_name("sandbox.py")

CALCULATE = {"type": "function", "function": {
    "name": "calculate", "description": "Evaluate an arithmetic expression exactly.",
    "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}

#: Model turns before the agent gives up (each may call the tool).
MAX_TURNS = 4


def run_in_sandbox(expression: str, timeout_s: float = 10.0) -> str:
    """Runs the tool in its own isolated interpreter process and returns what it printed."""
    try:
        done = subprocess.run([sys.executable, "-I", str(SANDBOX)], input=expression, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return "error: the sandbox timed out"
    return (done.stdout or done.stderr).strip() or f"error: exit code {done.returncode}"


def boxed(text: str) -> str | None:
    """The last ``\\boxed{…}`` answer in the text."""
    found = re.findall(r"\\boxed\{([^}]*)\}", text)
    return found[-1].strip() if found else None


def chat(llm: Any, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One model turn through the attempt's endpoint: the ``openai`` client when installed, else the stdlib helper."""
    try:
        client = llm.openai()
    except ImportError:
        return llm.chat(messages, tools=[CALCULATE])
    return client.chat.completions.create(model=llm.model, messages=messages, tools=[CALCULATE]).model_dump()


class SandboxCalculator(LitAgent):
    """Asks the model, runs each ``calculate`` call in the sandbox, feeds the result back; reward 1 for the right answer."""

    def training_rollout(self, task: dict[str, Any], resources: dict[str, Any], rollout: Any) -> dict[str, Any] | None:
        llm = resources["llm"]
        messages: list[dict[str, Any]] = [{"role": "user", "content": task["problem"]}]
        for _ in range(MAX_TURNS):
            if rollout.cancelled.is_set():
                return None  # the lease is gone: whatever this attempt reports would be refused
            message = chat(llm, messages)["choices"][0]["message"]
            calls = message.get("tool_calls") or []
            messages.append({"role": "assistant", "content": message.get("content") or "", **({"tool_calls": calls} if calls else {})})
            if not calls:
                break
            for call in calls:
                arguments = json.loads(call["function"]["arguments"] or "{}")
                result = run_in_sandbox(str(arguments.get("expression", "")))
                emit_object({"expression": arguments.get("expression"), "result": result}, name="sandbox")
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        answer = boxed(text_of({"choices": [{"message": messages[-1]}]}))
        reward = 1.0 if answer is not None and answer == str(task.get("ground_truth")) else 0.0
        emit_reward(reward)
        return {"reward": reward, "messages": messages}
