"""opencode (``opencode-ai``) as a rollout harness: Chat Completions, streamed with ``include_usage``.

Pointed at the gateway by an ``@ai-sdk/openai-compatible`` provider in
``~/.config/opencode/opencode.json`` (``options.baseURL`` = the rollout's base URL + ``/v1``,
``options.apiKey``, ``options.headers``), model ``edge/<model>``. See docs/harnesses/opencode.md.
"""
from __future__ import annotations

import json

from .cli_spec import HarnessSpec, Launch, LaunchRequest

PACKAGE = "opencode-ai@1.18.33"
#: Tells the gateway this harness re-serialises the turns it sends back, so it may continue from token ids.
CONTINUATION_HEADER = ("x-edge-rollout-continuation", "token-ids")
_PLUGIN_DEPENDENCY = {"@opencode-ai/plugin": PACKAGE.rsplit("@", 1)[1]}

ENV = {
    # models.dev catalogue, update check, LSP server downloads, share links: all off (each reaches the internet).
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}


def config_json(req: LaunchRequest) -> str:
    """The global ``opencode.json`` of one rollout (the workspace may still carry its own project config)."""
    headers = {**req.headers, CONTINUATION_HEADER[0]: CONTINUATION_HEADER[1]}
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "edge": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "edge",
                "options": {"baseURL": req.base_url + "/v1", "apiKey": req.api_key, "headers": headers},
                "models": {req.model: {"name": req.model}},
            }
        },
        "model": f"edge/{req.model}",
        "small_model": f"edge/{req.model}",
        "autoupdate": False,
        "share": "disabled",
    }
    return json.dumps(config, indent=2) + "\n"


def launch(req: LaunchRequest) -> Launch:
    """``opencode run --format json --auto -- <instruction>``.

    ``--auto`` approves what its permission rules would ask about (nobody is there to answer).
    opencode wraps a message argument that contains a space in double quotes (escaping inner
    ones) before the model sees it; ``--`` keeps an instruction that starts with ``-`` a message.
    The title call stays (a side call the gateway records and marks not trained); ``--title
    <text>`` would skip it.
    """
    argv = [req.binary, "run", "--format", "json", "--auto", "--", req.instruction]
    files = {
        ".config/opencode/opencode.json": config_json(req),
        # opencode installs @opencode-ai/plugin into each config directory in the background
        # (from registry.npmjs.org) unless node_modules exists and the lock file already lists it.
        ".config/opencode/package.json": json.dumps({"dependencies": _PLUGIN_DEPENDENCY}) + "\n",
        ".config/opencode/package-lock.json": json.dumps(
            {"lockfileVersion": 3, "packages": {"": {"dependencies": _PLUGIN_DEPENDENCY}}}) + "\n",
        ".config/opencode/node_modules/.edge-rollout": "seeded so opencode does not npm-install its plugin package\n",
    }
    return Launch(argv=argv, env=dict(ENV), files=files)


def count_calls(home: str, workspace: str, stdout: str) -> int:
    """Model calls opencode logged: the ``step_start`` events of its ``--format json`` output.

    opencode prints one ``step_start`` per main-loop model call once its response starts
    streaming (and a ``step_finish`` when it ends). The title call is not in this output, so it
    is not counted.
    """
    steps = 0
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("type") == "step_start":
            steps += 1
    return steps


SPEC = HarnessSpec(package=PACKAGE, binary="opencode", launch=launch, count_calls=count_calls)
