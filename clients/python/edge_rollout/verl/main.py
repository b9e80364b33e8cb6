"""``python3 -m edge_rollout.verl.main``: verl's ``main_ppo`` training on edge-rollout (needs verl).

verl's ``run_ppo(config, task_runner_class)`` takes a TaskRunner for recipes (main_ppo.py:49-88);
ours sets ``agent_loop_manager_class`` to ``EdgeRolloutAgentLoopManager`` (unless the config names
one) and, inside the runner's Ray process, builds ``EdgeRolloutTrainer`` where ``TaskRunner.run``
builds ``RayPPOTrainer`` (main_ppo.py:349). Overrides are verl's, plus ``+edge_rollout.*``
(see ``edge_rollout.verl.agent_loop_manager``).
"""
from __future__ import annotations

MANAGER_CLASS = "edge_rollout.verl.agent_loop_manager.EdgeRolloutAgentLoopManager"


def main() -> None:  # pragma: no cover - needs verl, hydra and ray
    """Parses verl's hydra config and runs PPO with edge-rollout's manager and trainer."""
    import hydra
    import ray
    from omegaconf import open_dict
    from verl.trainer import main_ppo

    class EdgeRolloutTaskRunner(main_ppo.TaskRunner):
        def run(self, config):  # noqa: ANN001 - verl's signature
            from edge_rollout.verl.trainer import EdgeRolloutTrainer
            main_ppo.RayPPOTrainer = EdgeRolloutTrainer  # this Ray process only
            return super().run(config)

    @hydra.main(config_path=main_ppo.__file__.rsplit("/", 1)[0] + "/config", config_name="ppo_trainer", version_base=None)
    def run(config) -> None:  # noqa: ANN001
        with open_dict(config):
            agent = config.actor_rollout_ref.rollout.agent
            if not agent.get("agent_loop_manager_class"):
                agent.agent_loop_manager_class = MANAGER_CLASS
        main_ppo.run_ppo(config, task_runner_class=ray.remote(num_cpus=1)(EdgeRolloutTaskRunner))

    run()


__all__ = ["MANAGER_CLASS", "main"]

if __name__ == "__main__":  # pragma: no cover
    main()
