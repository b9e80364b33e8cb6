"""Unit tests of the harness CLI launch specs (argv, environment, config files, logged calls), plus one live run per CLI.

The live tests (``test_live_*``) run the real CLI, installed by ``scripts/install-harness-clis.sh``
under ``.tmp/harness-clis``, against the capture server in test/fixtures/harness-requests/ on
loopback, inside a network namespace when the machine allows one; each skips only when its CLI is
not installed.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edge_rollout.harness import clis
from edge_rollout.harness.cli_spec import HarnessSpec, Launch

REPO = Path(__file__).resolve().parents[3]
LOGS = Path(__file__).parent / "fixtures" / "harness_logs"
BASE = "http://127.0.0.1:8787/v1/rollouts/r1/attempts/0/llm"


def launch(harness: str, **overrides) -> Launch:
    args = dict(instruction="create answer.txt containing 42", base_url=BASE, api_key="key-1",
                headers={"x-sample-key": "3:1"}, workspace="/w/ws", home="/w/home", root="/opt/clis")
    return clis.launch_for(harness, **{**args, **overrides})


def test_claude_code_is_pointed_at_the_gateway_by_environment() -> None:
    run = launch("claude-code")
    assert run.argv[:3] == ["/opt/clis/claude-code/bin/claude", "-p", "create answer.txt containing 42"]
    assert run.argv[3:] == ["--output-format", "json", "--dangerously-skip-permissions", "--model", "policy"]
    assert run.env["ANTHROPIC_BASE_URL"] == BASE and run.env["ANTHROPIC_API_KEY"] == "key-1"
    assert run.env["ANTHROPIC_CUSTOM_HEADERS"] == "x-sample-key: 3:1"
    assert run.env["IS_SANDBOX"] == run.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert run.files == {}


def test_codex_gets_a_responses_provider_in_its_config() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    run = launch("codex", model="pol")
    assert run.argv == ["/opt/clis/codex/bin/codex", "exec", "--skip-git-repo-check",
                        "--dangerously-bypass-approvals-and-sandbox", "-C", "/w/ws", "--", "create answer.txt containing 42"]
    config = tomllib.loads(run.files[".codex/config.toml"])
    assert config["model"] == "pol" and config["model_provider"] == "edge"
    provider = config["model_providers"]["edge"]
    assert provider["base_url"] == BASE + "/v1" and provider["wire_api"] == "responses"
    assert provider["http_headers"] == {"x-sample-key": "3:1"}
    assert run.env[provider["env_key"]] == "key-1"
    assert config["analytics"]["enabled"] is False and config["features"]["plugins"] is False


def test_opencode_gets_a_chat_provider_that_asks_for_token_id_continuation() -> None:
    run = launch("opencode")
    assert run.argv == ["/opt/clis/opencode/bin/opencode", "run", "--format", "json", "--auto", "--",
                        "create answer.txt containing 42"]
    config = json.loads(run.files[".config/opencode/opencode.json"])
    options = config["provider"]["edge"]["options"]
    assert options["baseURL"] == BASE + "/v1" and options["apiKey"] == "key-1"
    assert options["headers"] == {"x-sample-key": "3:1", "x-edge-rollout-continuation": "token-ids"}
    assert config["model"] == "edge/policy" and config["provider"]["edge"]["npm"] == "@ai-sdk/openai-compatible"
    assert ".config/opencode/node_modules/.edge-rollout" in run.files
    assert run.env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"


def test_launch_for_refuses_bad_input_naming_it() -> None:
    with pytest.raises(ValueError, match="base_url"):
        launch("codex", base_url=BASE + "/v1")
    with pytest.raises(ValueError, match="harness must be one of"):
        launch("aider")
    with pytest.raises(ValueError, match="headers"):
        launch("claude-code", headers={"x-a": "b\nx-b: c"})
    with pytest.raises(ValueError, match="instruction"):
        launch("opencode", instruction="  ")


def test_cli_path_honours_the_root_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clis.ROOT_VARIABLE, "/srv/clis")
    assert clis.cli_path("codex") == "/srv/clis/codex/bin/codex"
    assert clis.cli_path("opencode", root="/x") == "/x/opencode/bin/opencode"
    monkeypatch.delenv(clis.ROOT_VARIABLE)
    assert clis.cli_path("claude-code").endswith(".tmp/harness-clis/claude-code/bin/claude")


def test_register_adds_a_cli() -> None:
    spec = HarnessSpec(package="my-agent@1.0.0", binary="my-agent",
                       launch=lambda req: Launch(argv=[req.binary, req.instruction], env={"BASE": req.base_url}, files={}),
                       count_calls=lambda home, workspace, stdout: stdout.count("call"))
    clis.register("my-agent", spec)
    try:
        assert launch("my-agent").argv == ["/opt/clis/my-agent/bin/my-agent", "create answer.txt containing 42"]
        assert clis.logged_calls("my-agent", home="/h", workspace="/w", stdout="call call") == 2
        assert spec.version == "1.0.0"
    finally:
        del clis.REGISTRY["my-agent"]


@pytest.mark.parametrize("harness", clis.HARNESSES)
def test_logged_calls_reads_each_harness_log_of_a_two_call_run(harness: str) -> None:
    logs = LOGS / harness
    stdout = (logs / "stdout.txt").read_text()
    assert clis.logged_calls(harness, home=str(logs / "home"), workspace="/w", stdout=stdout) == 2


def test_logged_calls_of_claude_code_falls_back_to_num_turns(tmp_path: Path) -> None:
    stdout = (LOGS / "claude-code" / "stdout.txt").read_text()
    assert clis.logged_calls("claude-code", home=str(tmp_path), workspace="/w", stdout=stdout) == 2
    assert clis.logged_calls("claude-code", home=str(tmp_path), workspace="/w", stdout="") == 0


def test_logged_calls_is_zero_when_a_harness_wrote_nothing(tmp_path: Path) -> None:
    for harness in clis.HARNESSES:
        assert clis.logged_calls(harness, home=str(tmp_path), workspace=str(tmp_path), stdout="") == 0


# --- Live: the real CLIs against the capture server (skipped only when the CLI is not installed) ---------------

CAPTURE = REPO / "test" / "fixtures" / "harness-requests" / "capture.py"


@pytest.mark.parametrize("harness", clis.HARNESSES)
def test_live_cli_completes_the_task_through_its_shell_tool(harness: str) -> None:
    """LIVE: runs the installed CLI (scripts/install-harness-clis.sh) offline against the loopback capture server."""
    if not clis.installed(harness):
        pytest.skip(f"{harness} is not installed under .tmp/harness-clis (run scripts/install-harness-clis.sh {harness})")
    done = subprocess.run([sys.executable, str(CAPTURE), harness, "--timeout", "120"], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["rc"] == 0, summary["stderr_tail"]
    assert summary["answer"] == "42"
    main_calls = [name for name in summary["requests"] if "-main-" in name]
    assert len(main_calls) == 2 and summary["logged_calls"] == 2
    assert summary["dns_lookups"] == []
    assert all('inet_addr("127.0.0.1")' in c for c in summary["connects"])
