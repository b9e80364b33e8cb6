"""The agent-loop manager verl's trainer builds from ``agent_loop_manager_class``.

``RayPPOTrainer.init_workers`` loads the class named by
``actor_rollout_ref.rollout.agent.agent_loop_manager_class`` and calls it as
``(config=, worker_group=, rollout_resource_pool=, rm_resource_pool=)`` (ray_trainer.py:900-917),
then hands ``manager.rollout_replicas`` to its ``CheckpointEngineManager`` (ray_trainer.py:919-923),
which syncs weights into them. fit() calls ``generate_sequences``, ``start_profile(**kw)`` and
``stop_profile()`` (ray_trainer.py:1394-1419); ``clear_kv_cache()`` is the manager's too
(agent_loop.py:1002-1004). This manager starts verl's vLLM replicas exactly as verl's own does
(agent_loop.py:876-920), points edge-rollout's policy at them (``PUT /v1/policy`` with their
addresses as ``vllm`` replicas), and runs every rollout on edge-rollout.

Settings, under ``edge_rollout`` in the trainer config (``+edge_rollout.url=…`` on the command line):
``url`` (default ``$EDGE_ROLLOUT_URL``), ``token`` (default ``$EDGE_ROLLOUT_TOKEN``), ``agent``
(required), ``training_mode`` (``verl/hybrid``), ``pad_token_id`` (0; the tokenizer's), ``timeout``
(1800 s), ``max_concurrent``, ``run_id``, ``model`` (the served model name for ``PUT /v1/policy``;
default ``actor_rollout_ref.model.path``), ``point_policy`` (true).
"""
from __future__ import annotations

import asyncio
import os
from typing import Any, Optional, Sequence

from ..client import Client
from .call_plan import _get
from .generate_sequences import EdgeRolloutManager


class EdgeRolloutAgentLoopManager(EdgeRolloutManager):
    """verl's ``AgentLoopManager`` contract on edge-rollout (see the module doc).

    ``replicas`` and ``client`` are for callers without verl (tests, the CPU example): the
    rollout replicas to drive (objects with async ``start_profile`` / ``stop_profile`` /
    ``clear_kv_cache`` and a ``_server_address``), and the client to use.
    """

    def __init__(self, config: Any, worker_group: Any = None, rollout_resource_pool: Any = None, rm_resource_pool: Any = None,
                 *, replicas: Optional[Sequence[Any]] = None, client: Optional[Client] = None):
        settings = _get(config, "edge_rollout") or {}
        rollout = config.actor_rollout_ref.rollout
        url = _get(settings, "url") or os.environ.get("EDGE_ROLLOUT_URL")
        agent = _get(settings, "agent")
        if client is None and not url:
            raise ValueError("edge_rollout.url is required (or set EDGE_ROLLOUT_URL)")
        if not agent:
            raise ValueError("edge_rollout.agent is required: the registered edge-rollout agent that runs every row")
        client = client or Client(url, token=_get(settings, "token") or os.environ.get("EDGE_ROLLOUT_TOKEN"))
        truncation = _get(_get(config, "data"), "truncation") or "left"
        options = {key: _get(settings, key) for key in ("training_mode", "timeout", "max_concurrent", "run_id", "on_dropped")}
        super().__init__(client, agent, rollout.n, rollout.prompt_length, rollout.response_length,
                         int(_get(settings, "pad_token_id") or 0), val_n=int(_get(_get(rollout, "val_kwargs"), "n") or 1),
                         rollout=rollout, truncation=truncation if truncation in ("left", "right", "middle", "error") else "left",
                         **{key: value for key, value in options.items() if value is not None})
        self.verl_config, self.worker_group = config, worker_group
        self.rollout_replicas = list(replicas) if replicas is not None else _start_verl_replicas(config, worker_group)
        self.server_addresses = [replica._server_address for replica in self.rollout_replicas]
        if self.server_addresses and _get(settings, "point_policy") is not False:
            model = _get(settings, "model") or _get(_get(_get(config, "actor_rollout_ref"), "model"), "path")
            self.point_policy(model)

    def point_policy(self, model: Optional[str] = None) -> dict[str, Any]:
        """``PUT /v1/policy``: edge-rollout's model calls go to verl's vLLM servers (one replica each)."""
        backend = {"name": "vllm", "replicas": [_as_url(address) for address in self.server_addresses]}
        return self.client.request("PUT", "/v1/policy", {"backend": backend, **({"model": model} if model else {})})

    def start_profile(self, **kwargs: Any) -> None:
        """Starts profiling on every rollout replica (fit passes ``global_step=``)."""
        _run_all([replica.start_profile(**kwargs) for replica in self.rollout_replicas])

    def stop_profile(self) -> None:
        """Stops profiling on every rollout replica."""
        _run_all([replica.stop_profile() for replica in self.rollout_replicas])

    def clear_kv_cache(self) -> None:
        """Clears every replica's KV cache without putting it to sleep."""
        _run_all([replica.clear_kv_cache() for replica in self.rollout_replicas])


def _as_url(address: str) -> str:
    return address if address.startswith(("http://", "https://")) else f"http://{address}"


def _run_all(tasks: list[Any]) -> None:
    """Awaits the replicas' coroutines together, as verl's manager does (agent_loop.py:1014-1018)."""
    async def run_all() -> None:
        await asyncio.gather(*tasks)

    asyncio.run(run_all())


def _start_verl_replicas(config: Any, worker_group: Any) -> list[Any]:
    """verl's rollout replicas, built and started as ``AgentLoopManager._initialize_llm_servers``
    does (agent_loop.py:876-920). Needs verl; without a worker group (and without verl) none."""
    if worker_group is None:
        return []
    from verl.workers.rollout.replica import get_rollout_replica_class  # verl is installed wherever a worker group exists

    rollout = config.actor_rollout_ref.rollout
    per_replica = rollout.tensor_model_parallel_size * rollout.data_parallel_size * rollout.pipeline_model_parallel_size
    replica_class = get_rollout_replica_class(rollout.name)
    replicas = [replica_class(replica_rank=rank, config=rollout, model_config=config.actor_rollout_ref.model,
                              gpus_per_node=config.trainer.n_gpus_per_node)
                for rank in range(worker_group.world_size // per_replica)]
    _run_all([replica.init_hybrid(worker_group) for replica in replicas])
    return replicas


__all__ = ["EdgeRolloutAgentLoopManager"]
