"""Unit: ``python3 -m edge_rollout.verl.main`` wires verl's ``main_ppo`` the way docs/verl.md says.

verl, hydra, ray and omegaconf are not installable here, so each is a stand-in holding only what
``edge_rollout.verl.main`` touches, restated from verl's source at the commit pinned in docs/verl.md:
``main_ppo.run_ppo(config, task_runner_class)`` creates the runner and calls ``run(config)``
(main_ppo.py:49-98), ``TaskRunner.run`` builds ``RayPPOTrainer(config=…)`` by its module-global name,
then ``init_workers()`` and ``fit()`` (main_ppo.py:261-360); ``RayPPOTrainer.init_workers`` builds the
manager named by ``agent_loop_manager_class`` with ``(config=, worker_group=, rollout_resource_pool=,
rm_resource_pool=)`` (ray_trainer.py:900-917).
"""
from __future__ import annotations

import importlib
import pytest

from verl_fakes import FakeEdgeRollout, stand_in_packages

STAND_INS = {
    "hydra/__init__.py": '''
CONFIG = None  # what the command line would compose; the test sets it
def main(config_path, config_name, version_base):
    assert config_path.endswith("/config") and config_name == "ppo_trainer", (config_path, config_name)
    return lambda function: (lambda: function(CONFIG))
''',
    "ray/__init__.py": '''
from types import SimpleNamespace as NS
def remote(**options):
    def actor(cls):
        return NS(options=options, remote=lambda: NS(run=NS(remote=lambda config: cls().run(config))))
    return actor
def get(value):
    return value
''',
    "omegaconf/__init__.py": '''
from contextlib import contextmanager
@contextmanager
def open_dict(config):
    yield config
''',
    "custom_manager/__init__.py": '''
from edge_rollout.verl.agent_loop_manager import EdgeRolloutAgentLoopManager
class CustomManager(EdgeRolloutAgentLoopManager):
    """A user's own manager, named in the config: main() must keep it."""
''',
    "verl/trainer/main_ppo.py": '''
import ray
from verl.trainer.ppo.ray_trainer import RayPPOTrainer
BUILT = []
class TaskRunner:
    def run(self, config):
        trainer = RayPPOTrainer(config=config)
        BUILT.append(trainer)
        trainer.init_workers()
        trainer.fit()
def run_ppo(config, task_runner_class=None):
    runner = task_runner_class.remote()
    ray.get(runner.run.remote(config))
''',
    "verl/trainer/ppo/ray_trainer.py": '''
import importlib
from types import SimpleNamespace as NS
def compute_advantage(data, **kwargs):  # ray_trainer.py:130; fit calls it by this name
    return data
class RayPPOTrainer:
    def __init__(self, config, **kwargs):
        self.config, self.fitted = config, False
    def init_workers(self):
        module, name = self.config.actor_rollout_ref.rollout.agent.agent_loop_manager_class.rsplit(".", 1)
        manager_class = getattr(importlib.import_module(module), name)
        self.async_rollout_manager = manager_class(config=self.config, worker_group=None, rollout_resource_pool=None, rm_resource_pool=None)
        self.checkpoint_manager = NS(sleep_replicas=lambda: None, update_weights=lambda: None)
    def fit(self):
        self.fitted = compute_advantage is not COMPUTE_ADVANTAGE  # EdgeRolloutTrainer wraps it while fit runs
COMPUTE_ADVANTAGE = compute_advantage
''',
}


class Node(dict):
    """A config node as OmegaConf reads: attribute access and ``.get``."""

    __getattr__ = dict.get

    def __setattr__(self, key, value):
        self[key] = value


def config_for(url: str, manager_class: str | None = None) -> Node:
    agent = Node(num_workers=1, **({"agent_loop_manager_class": manager_class} if manager_class else {}))
    rollout = Node(n=2, prompt_length=8, response_length=8, temperature=1.0, top_p=1.0, agent=agent,
                   val_kwargs=Node(n=1, temperature=0.0, top_p=1.0, do_sample=False))
    return Node(actor_rollout_ref=Node(rollout=rollout, model=Node(path="Qwen/Qwen3-0.6B")), data=Node(truncation="left"),
                trainer=Node(n_gpus_per_node=1, nnodes=1), reward_model=Node(launch_reward_fn_async=False),
                edge_rollout={"url": url, "agent": "calculator"})


@pytest.fixture
def verl_main(tmp_path, server):
    FakeEdgeRollout(server)
    for _ in stand_in_packages(tmp_path, STAND_INS, fresh=("edge_rollout.verl.trainer", "edge_rollout.verl.main")):
        yield importlib.import_module("edge_rollout.verl.main")


def test_verl_main_runs_main_ppo_with_edge_rollouts_trainer_and_manager(server, verl_main):
    hydra, main_ppo = importlib.import_module("hydra"), importlib.import_module("verl.trainer.main_ppo")
    hydra.CONFIG = config = config_for(server.url)
    verl_main.main()
    assert config.actor_rollout_ref.rollout.agent.agent_loop_manager_class == verl_main.MANAGER_CLASS  # set when absent
    (trainer,) = main_ppo.BUILT
    assert type(trainer).__name__ == "EdgeRolloutTrainer" and trainer.fitted
    assert isinstance(trainer, importlib.import_module("verl.trainer.ppo.ray_trainer").RayPPOTrainer)
    assert type(trainer.async_rollout_manager).__name__ == "EdgeRolloutAgentLoopManager"
    assert trainer.async_rollout_manager.train_drift_segments is True and trainer.weight_sync.versions == []


def test_verl_main_keeps_a_manager_class_the_config_names(server, verl_main):
    hydra, main_ppo = importlib.import_module("hydra"), importlib.import_module("verl.trainer.main_ppo")
    hydra.CONFIG = config_for(server.url, manager_class="custom_manager.CustomManager")
    verl_main.main()
    (trainer,) = main_ppo.BUILT
    assert type(trainer.async_rollout_manager).__name__ == "CustomManager"
    assert type(trainer).__name__ == "EdgeRolloutTrainer" and trainer.async_rollout_manager.train_drift_segments is True
