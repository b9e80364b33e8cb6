"""A small real policy behind vLLM's wire: the model module the engine and the trainer share.

``policy`` is the causal language model (PyTorch, fp32, CPU), ``checkpoint`` saves and loads its
weights with every check a reload needs, and ``engine_server`` serves the simulator's token-source
protocol from it (``python3 -m edge_rollout.learn.engine_server``; docs/vllm.md, "The external token
source protocol"). The engine and a trainer import the same module, so the log-probs the engine
reports are the ones the trainer recomputes.
"""
