"""Unit: the names verl users wrote before ``edge_rollout.verl`` became a package (issue 30) still
reach the same objects: ``edge_rollout.verl_manager.EdgeRolloutAgentLoopManager`` as verl's
``agent_loop_manager_class``, ``python3 -m edge_rollout.verl_main``, and every public
``edge_rollout.verl_*`` module."""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import warnings
import sys
from pathlib import Path

import pytest

from edge_rollout.verl.agent_loop_manager import EdgeRolloutAgentLoopManager
from test_verl_main import STAND_INS, config_for
from verl_fakes import stand_in_packages

CLIENT = Path(__file__).resolve().parents[1]

#: Each old module and the module its code moved to.
OLD_NAMES = {
    "edge_rollout.verl_manager": "edge_rollout.verl.agent_loop_manager",
    "edge_rollout.verl_main": "edge_rollout.verl.main",
    "edge_rollout.verl_trainer": "edge_rollout.verl.trainer",
    "edge_rollout.verl_dapo": "edge_rollout.verl.dapo",
    "edge_rollout.verl_metrics": "edge_rollout.verl.metrics",
    "edge_rollout.verl_segments": "edge_rollout.verl.drift_segments",
    "edge_rollout.verl_validity": "edge_rollout.verl.validity",
}


@pytest.mark.parametrize("old, new", OLD_NAMES.items())
def test_an_old_module_name_exports_every_public_name_of_its_new_module(old, new):
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    assert new_module.__all__ and old_module.__all__ == new_module.__all__
    for name in new_module.__all__:
        assert getattr(old_module, name) is getattr(new_module, name), name


def test_the_manager_class_an_old_verl_config_names_loads_the_way_verl_loads_it():
    module, name = "edge_rollout.verl_manager.EdgeRolloutAgentLoopManager".rsplit(".", 1)  # ray_trainer.py:900-917
    assert getattr(importlib.import_module(module), name) is EdgeRolloutAgentLoopManager


def test_the_old_trainer_module_has_edge_rollouts_trainer_where_verl_is_installed(tmp_path):
    ray_trainer = {"verl/trainer/ppo/ray_trainer.py": STAND_INS["verl/trainer/ppo/ray_trainer.py"]}
    for _ in stand_in_packages(tmp_path, ray_trainer, fresh=("edge_rollout.verl.trainer", "edge_rollout.verl_trainer")):
        old, new = importlib.import_module("edge_rollout.verl_trainer"), importlib.import_module("edge_rollout.verl.trainer")
        assert "EdgeRolloutTrainer" in old.__all__ and old.EdgeRolloutTrainer is new.EdgeRolloutTrainer


HYDRA_FROM_ENV = '''
import json, os, sys
class Node(dict):
    __getattr__ = dict.get
    def __setattr__(self, key, value):
        self[key] = value
def node(value):
    return Node({key: node(item) for key, item in value.items()}) if isinstance(value, dict) else value
def main(config_path, config_name, version_base):
    def decorate(function):
        def run():
            config = node(json.loads(os.environ["STAND_IN_CONFIG"]))
            function(config)
            from verl.trainer.main_ppo import BUILT
            (trainer,) = BUILT
            print(json.dumps({"argv": sys.argv[1:], "trainer": type(trainer).__name__, "fitted": trainer.fitted,
                              "manager": type(trainer.async_rollout_manager).__name__,
                              "manager_class": config.actor_rollout_ref.rollout.agent.agent_loop_manager_class}))
        return run
    return decorate
'''


def test_python_m_edge_rollout_verl_main_still_runs_main_ppo_with_edge_rollouts_trainer(tmp_path):
    """The command itself, in a fresh interpreter, over the stand-ins of ``test_verl_main.py``."""
    for path, source in {**STAND_INS, "hydra/__init__.py": HYDRA_FROM_ENV}.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(source)
    for folder in ("verl", "verl/trainer", "verl/trainer/ppo"):
        (tmp_path / folder / "__init__.py").touch()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(CLIENT)]), "PYTHONDONTWRITEBYTECODE": "1",
           "STAND_IN_CONFIG": json.dumps(config_for("http://127.0.0.1:9"))}  # nothing here calls edge-rollout
    run = subprocess.run([sys.executable, "-m", "edge_rollout.verl_main", "trainer.total_epochs=1"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "RuntimeWarning" not in run.stderr  # runpy's, were the package to import the shim before running it
    assert json.loads(run.stdout.splitlines()[-1]) == {
        "argv": ["trainer.total_epochs=1"], "trainer": "EdgeRolloutTrainer", "fitted": True,
        "manager": "EdgeRolloutAgentLoopManager", "manager_class": "edge_rollout.verl.agent_loop_manager.EdgeRolloutAgentLoopManager"}


@pytest.mark.parametrize("old, new", OLD_NAMES.items())
def test_an_old_module_name_warns_once_naming_its_new_module(old, new):
    for name in (old, "edge_rollout._old_names"):
        sys.modules.pop(name, None)
    with pytest.warns(FutureWarning, match=f"{old} is deprecated.*import {new} instead"):
        importlib.import_module(old)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.import_module(old)  # cached: no second warning
