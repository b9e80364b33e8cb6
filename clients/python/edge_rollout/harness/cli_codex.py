"""Codex CLI (``@openai/codex``) as a rollout harness: OpenAI Responses, always streamed.

Pointed at the gateway by a custom model provider in ``~/.codex/config.toml`` (``base_url`` =
the rollout's base URL + ``/v1``, the key from an environment variable, ``wire_api = "responses"``:
this version refuses the chat wire). The model name must be one Codex does not know (``policy``):
a known name switches its tool set and prompt. See docs/harnesses/codex.md.
"""
from __future__ import annotations

import json
from pathlib import Path

from .cli_spec import HarnessSpec, Launch, LaunchRequest

PACKAGE = "@openai/codex@0.171.0"
#: The environment variable the provider reads its key from (Codex sends it as a Bearer token).
KEY_VARIABLE = "EDGE_ROLLOUT_API_KEY"


def _toml_string(value: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes; json.dumps never writes "\/").
    return json.dumps(value)


def config_toml(req: LaunchRequest) -> str:
    """The ``config.toml`` of one rollout: the ``edge`` provider and everything that would reach the internet off."""
    headers = ", ".join(f"{_toml_string(k)} = {_toml_string(v)}" for k, v in req.headers.items())
    return "\n".join([
        f"model = {_toml_string(req.model)}",
        'model_provider = "edge"',
        # The hosted web_search tool cannot be served by a gateway; without this it is in every request.
        'web_search = "disabled"',
        "",
        "[analytics]",
        "enabled = false",
        "",
        # Plugins sync from github.com and chatgpt.com at start (DNS lookups seen offline).
        "[features]",
        "plugins = false",
        "",
        "[model_providers.edge]",
        'name = "edge"',
        f"base_url = {_toml_string(req.base_url + '/v1')}",
        f'env_key = "{KEY_VARIABLE}"',
        'wire_api = "responses"',
        f"http_headers = {{ {headers} }}",
        "",
    ])


def launch(req: LaunchRequest) -> Launch:
    """``codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -C <workspace> -- <instruction>``.

    Approvals and Codex's own sandbox are off: the runner isolates the CLI (network namespace,
    fresh workspace), and as root in a namespace Codex's landlock/seccomp sandbox adds nothing.
    """
    argv = [req.binary, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
            "-C", req.workspace, "--", req.instruction]
    return Launch(argv=argv, env={KEY_VARIABLE: req.api_key}, files={".codex/config.toml": config_toml(req)})


def count_calls(home: str, workspace: str, stdout: str) -> int:
    """Model calls Codex logged: distinct ``response_id`` of its ``token_usage_record`` session entries.

    Codex writes one ``token_usage_record`` line per completed Responses call to the session file
    ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (subagents write their own files; all are
    read). A call that failed before ``response.completed`` has no record. Where no file has such
    lines (an older CLI), the ``token_count`` events that carry usage are counted instead.
    """
    response_ids, token_counts = set(), 0
    for path in sorted(Path(home, ".codex", "sessions").glob("**/*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            payload = entry.get("payload") or {}
            if entry.get("type") == "token_usage_record":
                response_ids.add(payload.get("response_id") or f"line:{path}:{entry.get('ordinal')}")
            elif entry.get("type") == "event_msg" and payload.get("type") == "token_count" and payload.get("info"):
                token_counts += 1
    return len(response_ids) if response_ids else token_counts


SPEC = HarnessSpec(package=PACKAGE, binary="codex", launch=launch, count_calls=count_calls)
