"""Claude Code (``@anthropic-ai/claude-code``) as a rollout harness: Anthropic Messages, always streamed.

It is pointed at the gateway by ``ANTHROPIC_BASE_URL`` (it appends ``/v1/messages?beta=true``) and
``ANTHROPIC_API_KEY`` (sent as ``x-api-key``); extra headers go in ``ANTHROPIC_CUSTOM_HEADERS``, one
``Name: value`` per line. See docs/harnesses/claude-code.md.
"""
from __future__ import annotations

import json
from pathlib import Path

from .cli_spec import HarnessSpec, Launch, LaunchRequest

PACKAGE = "@anthropic-ai/claude-code@2.1.332"


def launch(req: LaunchRequest) -> Launch:
    """``claude -p <instruction> --output-format json --dangerously-skip-permissions --model <model>``."""
    env = {
        "ANTHROPIC_BASE_URL": req.base_url,
        "ANTHROPIC_API_KEY": req.api_key,
        # Every model alias names the policy, so subagents and small-model side calls say so too.
        "ANTHROPIC_DEFAULT_OPUS_MODEL": req.model,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": req.model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": req.model,
        "ANTHROPIC_SMALL_FAST_MODEL": req.model,
        # No telemetry, error reports, update checks or other calls beyond the model API.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        # --dangerously-skip-permissions refuses to run as root unless it is told it is sandboxed.
        "IS_SANDBOX": "1",
    }
    if req.headers:
        env["ANTHROPIC_CUSTOM_HEADERS"] = "\n".join(f"{k}: {v}" for k, v in req.headers.items())
    argv = [req.binary, "-p", req.instruction, "--output-format", "json", "--dangerously-skip-permissions", "--model", req.model]
    return Launch(argv=argv, env=env, files={})


def count_calls(home: str, workspace: str, stdout: str) -> int:
    """Model calls Claude Code logged: its ``api-request`` transcript entries (one per Messages call).

    Every session transcript under ``~/.claude/projects/`` (the main one and any subagent's) gets
    one ``{"type": "api-request", "querySource": ...}`` line per API call it makes, main loop
    (``querySource: "sdk"``) and side calls alike. Where no transcript has such lines (an older
    CLI), the distinct assistant ``message.id`` values are counted instead, and without any
    transcript the ``num_turns`` of the ``--output-format json`` result (main-loop calls only).
    """
    requests, message_ids, saw_transcript = 0, set(), False
    for path in sorted(Path(home, ".claude", "projects").glob("**/*.jsonl")):
        saw_transcript = True
        for line in path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a line cut short by a kill
            if entry.get("type") == "api-request":
                requests += 1
            elif entry.get("type") == "assistant" and isinstance(entry.get("message"), dict):
                message_ids.add(entry["message"].get("id"))
    if requests:
        return requests
    if saw_transcript:
        return len(message_ids - {None})
    return _num_turns(stdout)


def _num_turns(stdout: str) -> int:
    for line in reversed(stdout.strip().splitlines()):
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if isinstance(result, dict) and result.get("type") == "result":
            return int(result.get("num_turns") or 0)
    return 0


SPEC = HarnessSpec(package=PACKAGE, binary="claude", launch=launch, count_calls=count_calls)
