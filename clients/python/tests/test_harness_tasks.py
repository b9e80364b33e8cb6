"""Unit tests of the harness tasks: every shipped task's oracle passes its check, its wrong attempt and the
untouched workspace fail it; task and dataset validation names what is wrong."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from edge_rollout.harness import TaskError, list_dataset, load_task, open_workspace, resolve_task, run_check
from edge_rollout.harness.workspace import run_script

TASKS = Path(__file__).resolve().parents[3] / "examples" / "harness-tasks"
TASK_IDS = sorted(p.name for p in TASKS.iterdir() if p.is_dir())


def test_the_shipped_set_holds_12_to_16_tasks_and_the_dataset_lists_each_once():
    assert 12 <= len(TASK_IDS) <= 16
    assert list_dataset(TASKS) == TASK_IDS  # the directory's dataset.jsonl, in name order
    assert list_dataset(TASKS / "dataset.jsonl") == TASK_IDS


def test_each_dataset_row_is_a_batch_row_whose_task_dir_names_its_task():
    for line in (TASKS / "dataset.jsonl").read_text().splitlines():
        row = json.loads(line)
        task = load_task(TASKS / row["task_dir"])
        # DatasetRow (src/schemas/batch.ts): a non-empty prompt and reward_model.ground_truth present.
        assert row["prompt"] == task.instruction
        assert "ground_truth" in row["reward_model"]
        assert row["extra_info"]["index"] == row["task_dir"]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_the_oracle_passes_and_the_wrong_attempt_and_the_untouched_workspace_fail(task_id):
    task = load_task(TASKS / task_id)
    assert task.agent_timeout_s > 0 and task.verifier_timeout_s > 0 and task.difficulty in ("easy", "medium", "hard")
    verdicts = {}
    for attempt in ("untouched", "solve.sh", "wrong.sh"):
        with open_workspace(task) as ws:
            if attempt != "untouched":
                ran = run_script(ws, task.solution_dir / attempt, timeout_s=10)
                assert ran.exit_code == 0, ran.text("stderr")
            check = run_check(ws, task)
            verdicts[attempt] = (check.reward, check.passed, check.reward_from_file)
    assert verdicts == {"untouched": (0.0, False, True), "solve.sh": (1.0, True, True), "wrong.sh": (0.0, False, True)}


def copy_task(tmp_path: Path, task_id: str = "create-answer-file") -> Path:
    target = tmp_path / task_id
    shutil.copytree(TASKS / task_id, target)
    return target


def test_a_task_without_instruction_md_is_refused_naming_the_file(tmp_path):
    task = copy_task(tmp_path)
    (task / "instruction.md").unlink()
    with pytest.raises(TaskError, match=r"instruction\.md: missing"):
        load_task(task)


def test_a_task_without_its_check_or_environment_is_refused_naming_what_is_missing(tmp_path):
    task = copy_task(tmp_path)
    (task / "tests" / "test.sh").unlink()
    with pytest.raises(TaskError, match=r"tests/test\.sh: missing"):
        load_task(task)
    task = copy_task(tmp_path, "append-line")
    shutil.rmtree(task / "environment")
    with pytest.raises(TaskError, match=r"environment: missing"):
        load_task(task)


def test_a_bad_timeout_in_task_toml_is_refused_naming_the_field(tmp_path):
    task = copy_task(tmp_path)
    (task / "task.toml").write_text('version = "1.0"\n[agent]\ntimeout_sec = -1\n')
    with pytest.raises(TaskError, match=r"task\.toml: agent\.timeout_sec must be a number > 0"):
        load_task(task)
    (task / "task.toml").write_text("version = \n")
    with pytest.raises(TaskError, match=r"task\.toml: not valid TOML"):
        load_task(task)


def test_a_task_id_never_reaches_outside_the_tasks_root(tmp_path):
    with pytest.raises(TaskError, match="not a task directory name"):
        resolve_task(TASKS, "../harness-tasks/create-answer-file")
    with pytest.raises(TaskError, match="no task directory here"):
        resolve_task(TASKS, "no-such-task")
    assert resolve_task(TASKS, "create-answer-file").task_id == "create-answer-file"


def test_a_dataset_row_without_task_dir_is_refused_with_its_line(tmp_path):
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(json.dumps({"task_dir": "a"}) + "\n" + json.dumps({"prompt": "x"}) + "\n")
    with pytest.raises(TaskError, match="line 2: task_dir must name a task directory"):
        list_dataset(dataset)
