"""Unit tests of the per-rollout workspace: fresh starting files, removed whatever happens, the check copied in last."""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from edge_rollout.harness import load_task, open_workspace, run_check

TASKS = Path(__file__).resolve().parents[3] / "examples" / "harness-tasks"


@pytest.fixture
def task():
    return load_task(TASKS / "create-answer-file")


def test_a_workspace_holds_the_starting_files_a_fresh_home_and_no_tests_or_solution(task):
    with open_workspace(task) as ws:
        assert sorted(os.listdir(ws.workspace)) == ["NOTES.txt"]
        assert os.listdir(ws.home) == []
        assert not ws.tests.exists()
        assert not list(ws.root.rglob("solve.sh")) and not list(ws.root.rglob("test.sh"))


def test_the_workspace_is_removed_after_a_passing_rollout(task):
    with open_workspace(task) as ws:
        (ws.workspace / "answer.txt").write_text("42\n")
        assert run_check(ws, task).reward == 1.0
        assert (ws.tests / "test.sh").is_file()  # copied in by the check, not before
    assert not ws.root.exists()


def test_the_workspace_is_removed_after_a_failing_rollout_even_with_read_only_files(task):
    with open_workspace(task) as ws:
        locked = ws.workspace / "locked"
        locked.mkdir()
        (locked / "f").write_text("x")
        locked.chmod(stat.S_IRUSR | stat.S_IXUSR)  # a harness may take write permission away
        assert run_check(ws, task).reward == 0.0
    assert not ws.root.exists()


def test_the_workspace_is_removed_when_the_rollout_raises(task):
    with pytest.raises(RuntimeError, match="boom"):
        with open_workspace(task) as ws:
            (ws.workspace / "answer.txt").write_text("42\n")
            raise RuntimeError("boom")
    assert not ws.root.exists()


def test_a_number_in_the_reward_file_is_the_reward_else_the_exit_code_decides(task, tmp_path):
    custom = tmp_path / "create-answer-file"
    shutil.copytree(task.path, custom)
    (custom / "tests" / "test.sh").write_text('echo 0.25 > "$REWARD_FILE"\nexit 1\n')
    with open_workspace(load_task(custom)) as ws:
        check = run_check(ws, load_task(custom))
    assert (check.reward, check.passed, check.reward_from_file) == (0.25, False, True)
    (custom / "tests" / "test.sh").write_text("exit 0\n")
    with open_workspace(load_task(custom)) as ws:
        check = run_check(ws, load_task(custom))
    assert (check.reward, check.passed, check.reward_from_file) == (1.0, True, False)


def test_a_check_past_its_timeout_gives_reward_zero(task, tmp_path):
    custom = tmp_path / "create-answer-file"
    shutil.copytree(task.path, custom)
    (custom / "tests" / "test.sh").write_text('echo 1 > "$REWARD_FILE"\nsleep 30\n')
    with open_workspace(load_task(custom)) as ws:
        check = run_check(ws, load_task(custom), timeout_s=0.5)
    assert (check.reward, check.timed_out) == (0.0, True)
