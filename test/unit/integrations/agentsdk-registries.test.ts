import { describe, expect, it } from "vitest";
import {
  AGENTS_MAPPING,
  DataManagerRegistry,
  InferBackendRegistry,
  TrainRegistry,
} from "../../../src/integrations/agentsdk-registries";
import { backendRegistry } from "../../../src/gateway/backends";
import { dataManagers, trainingModes } from "../../../src/training/training-modes";
import { agentRegistry } from "../../../src/sdk/agent-registry";
import "../../../src/agents";

describe("AgentSDK's registries as views over edge-rollout's (unit)", () => {
  it("TrainRegistry: verl's built-in modes answer for a registered backend; a new mode lands in the Worker's training modes", () => {
    expect(TrainRegistry.get_method("verl", "hybrid", "vllm")).toMatchObject({
      training_mode: "verl/hybrid",
      max_staleness: 0,
      rollout_method: "vllm",
    });
    expect(TrainRegistry.get_method("verl", "one_step_off", "vllm_pd")).toMatchObject({
      training_mode: "verl/one_step_off",
      max_staleness: 1,
    });
    expect(TrainRegistry.get_method("verl", "hybrid", "no-such-backend")).toBeUndefined();
    expect(TrainRegistry.get_method("other", "hybrid", "vllm")).toBeUndefined();

    TrainRegistry.register("verl", "three_step_off", "vllm", {
      max_staleness: 3,
      description: "three versions behind",
    });
    expect(trainingModes.get("verl/three_step_off")).toMatchObject({ max_staleness: 3 });
    expect(TrainRegistry.get_method("verl", "three_step_off", "vllm")).toMatchObject({
      training_mode: "verl/three_step_off",
      max_staleness: 3,
      rollout_method: "vllm",
    });
    expect(() => TrainRegistry.register("verl", "unknown_mode", "vllm")).toThrow(
      /pass its train_method/,
    );
    expect(() => TrainRegistry.register("verl", "hybrid", "no-such-backend")).toThrow(
      /not a registered backend/,
    );
  });

  it("DataManagerRegistry: keyed by (train_backend, service_mode), registering into the Worker's data managers", () => {
    expect(DataManagerRegistry.get("verl", "train")).toMatchObject({
      data_manager: "train",
      feeds_trainer: true,
    });
    expect(DataManagerRegistry.get("verl", "infer")).toMatchObject({
      data_manager: "infer",
      feeds_trainer: false,
    });
    DataManagerRegistry.register("verl", "agentsdk-eval", {
      feeds_trainer: false,
      description: "held-out evaluation",
    });
    expect(dataManagers.get("agentsdk-eval")).toMatchObject({ feeds_trainer: false });
    expect(() => DataManagerRegistry.get("megatron", "train")).toThrow(/train backend "megatron"/);
  });

  it("InferBackendRegistry.getClass and AGENTS_MAPPING read the live registries", () => {
    expect(InferBackendRegistry.getClass("vllm")).toBe(backendRegistry.get("vllm"));
    expect(InferBackendRegistry.getClass("vllm_pd")).toBe(backendRegistry.get("vllm_pd"));
    expect(InferBackendRegistry.getClass("nope")).toBeUndefined();
    expect(Object.keys(AGENTS_MAPPING)).toEqual(agentRegistry.names());
    expect(AGENTS_MAPPING.calculator).toBe(agentRegistry.get("calculator"));
    expect("calculator" in AGENTS_MAPPING).toBe(true);
    expect(AGENTS_MAPPING["no-such-agent"]).toBeUndefined();
  });
});
