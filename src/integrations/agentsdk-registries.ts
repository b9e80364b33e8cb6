/**
 * @module AgentSDK's registries under their own names, as thin views over edge-rollout's: an
 * AgentSDK user finds `TrainRegistry`, `DataManagerRegistry`, `InferBackendRegistry` and
 * `AGENTS_MAPPING` where they expect them, and whatever they register lands in the registries the
 * Worker resolves names against (training modes, data managers, backends, agents). Nothing is kept
 * here but the seed's extra keys.
 */
import { agentRegistry, type AgentDefinition } from "../sdk/agent-registry";
import { backendRegistry } from "../gateway/backends";
import type { BackendFactory } from "../gateway/backends";
import {
  dataManagers,
  trainingModes,
  type DataManagerDefinition,
  type ResolvedTrainingMode,
  type TrainingModeDefinition,
} from "../training/training-modes";

/** What `TrainRegistry.get_method` answers: the training mode a trainer pulls with, and how it rolls out. */
export interface TrainMethod extends ResolvedTrainingMode {
  /** `<train_engine>/<cluster_mode>`: the `training_mode` of batches and feed pulls. */
  training_mode: string;
  /** The inference backend rollouts sample from (`vllm`, `vllm_pd`, …): the policy's `backend.name`. */
  rollout_method: string;
}

const trainMethods = new Map<string, string>();
const methodKey = (engine: string, mode: string, rollout: string) =>
  `${engine}\u0000${mode}\u0000${rollout}`;

/**
 * AgentSDK's TrainRegistry: a train method per (train_engine, cluster_mode, rollout_method). Here
 * a train method is a training mode named `<train_engine>/<cluster_mode>` (verl's `hybrid` and
 * `one_step_off` are built in) served by the backend named `rollout_method`.
 */
export const TrainRegistry = {
  /**
   * Registers `train_method` for the triple. A mode not registered yet is added to the Worker's
   * training modes (`train_method` gives its staleness); a built-in one is only bound to the
   * rollout method. The rollout method must be a registered backend.
   *
   * @example
   * TrainRegistry.register("verl", "two_step_off", "vllm", { max_staleness: 2, description: "two versions behind" });
   */
  register(
    train_engine: string,
    cluster_mode: string,
    rollout_method: string,
    train_method?: TrainingModeDefinition,
  ): void {
    const name = `${train_engine}/${cluster_mode}`;
    if (!backendRegistry.get(rollout_method))
      throw new TypeError(
        `rollout method "${rollout_method}" is not a registered backend; known: ${backendRegistry.names().join(", ")}`,
      );
    if (!trainingModes.get(name)) {
      if (!train_method)
        throw new TypeError(
          `training mode "${name}" is not registered: pass its train_method ({max_staleness, description})`,
        );
      trainingModes.register(name, train_method);
    }
    trainMethods.set(methodKey(train_engine, cluster_mode, rollout_method), name);
  },

  /** The train method registered for the triple, or undefined (built-in verl modes answer for any backend). */
  get_method(
    train_engine: string,
    cluster_mode: string,
    rollout_method: string,
  ): TrainMethod | undefined {
    const name =
      trainMethods.get(methodKey(train_engine, cluster_mode, rollout_method)) ??
      (train_engine === "verl" && backendRegistry.get(rollout_method)
        ? `verl/${cluster_mode}`
        : undefined);
    const mode = name === undefined ? undefined : trainingModes.get(name);
    return mode ? { ...mode, training_mode: mode.name, rollout_method } : undefined;
  },
};

/**
 * AgentSDK's DataManagerRegistry, keyed by (train_backend, service_mode). What a data manager
 * decides here is where a finished rollout goes, which depends on the service mode only: `train`
 * feeds the trainer, `infer` stores trajectories; the train backend is accepted for the seed's
 * call shape and checked against the training modes' engines.
 */
export const DataManagerRegistry = {
  /** Registers a data manager for a new service mode (e.g. `eval`). */
  register(train_backend: string, service_mode: string, manager: DataManagerDefinition): void {
    checkTrainBackend(train_backend);
    dataManagers.register(service_mode, manager);
  },

  /** The data manager of `service_mode` (the batch's `data_manager`), or undefined. */
  get(
    train_backend: string,
    service_mode: string,
  ): (DataManagerDefinition & { data_manager: string }) | undefined {
    checkTrainBackend(train_backend);
    const manager = dataManagers.get(service_mode);
    return manager ? { ...manager, data_manager: service_mode } : undefined;
  },
};

function checkTrainBackend(trainBackend: string): void {
  const engines = new Set(trainingModes.names().map((name) => name.split("/")[0]!));
  if (!engines.has(trainBackend))
    throw new TypeError(
      `train backend "${trainBackend}" has no training mode; known: ${[...engines].sort().join(", ")}`,
    );
}

/** AgentSDK's InferBackendRegistry: backends by name (`vllm`, `vllm_pd`, `openai`). */
export const InferBackendRegistry = {
  /** The backend factory registered as `name` (what `PUT /v1/policy {backend: {name}}` builds), or undefined. */
  getClass(name: string): BackendFactory | undefined {
    return backendRegistry.get(name);
  },
  /** Every registered backend name. */
  names(): string[] {
    return backendRegistry.names();
  },
};

/**
 * AgentSDK's AGENTS_MAPPING: every registered agent by name, read live from the agent registry
 * (so agents defined after import are listed too).
 */
export const AGENTS_MAPPING: Readonly<Record<string, AgentDefinition>> = new Proxy(
  {} as Record<string, AgentDefinition>,
  {
    get: (_target, key) => (typeof key === "string" ? agentRegistry.get(key) : undefined),
    has: (_target, key) => typeof key === "string" && agentRegistry.get(key) !== undefined,
    ownKeys: () => agentRegistry.names(),
    getOwnPropertyDescriptor: (_target, key) =>
      typeof key === "string" && agentRegistry.get(key)
        ? { value: agentRegistry.get(key), enumerable: true, configurable: true, writable: false }
        : undefined,
  },
);
