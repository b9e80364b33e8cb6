/** @module Loading an agent's declared resources (the latest versions the policy holds), with their defaults. */
import type { ResourceSpecs } from "../../sdk/resources";
import { AgentContractError } from "../../sdk/contract-error";
import type { GetResourceResult } from "../policy/policy-results";

/**
 * The latest versions of named resources, as attempt engines read them. In a Worker: the rollout's
 * admission shard, which holds the latest version of each (pushed with the policy's fence) and
 * reads a version's value from the policy object once, so no rollout asks a deployment-wide object.
 */
export interface ResourcePort {
  getResource(name: string, rolloutId: string): Promise<GetResourceResult>;
}

/** Resource values by key, which version each came from (`name@version`, or `default`), and its stored name. */
export interface LoadedResources {
  values: Record<string, unknown>;
  versions: Record<string, string>;
  /** The resource name (`PUT /v1/resources/:name`) behind each key. */
  names: Record<string, string>;
}

/**
 * Reads the latest version of each declared resource (concurrently), falling back to its declared
 * default when the policy has none. A stored value the declaration cannot parse is a contract
 * error naming the version, so a bad PUT fails rollouts loudly instead of running on the default.
 */
export async function loadResources(
  port: ResourcePort,
  specs: ResourceSpecs,
  rolloutId: string,
): Promise<LoadedResources> {
  const entries = await Promise.all(
    Object.entries(specs).map(async ([key, spec]) => {
      const name = spec.name ?? key;
      const stored = await port.getResource(name, rolloutId);
      if (!stored.ok) return [key, spec.default, "default"] as const;
      try {
        return [key, spec.parse(stored.value), stored.id] as const;
      } catch (error) {
        throw new AgentContractError(
          `resource "${key}" (${stored.id}) cannot be used: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
    }),
  );
  return {
    values: Object.fromEntries(entries.map(([key, value]) => [key, value])),
    versions: Object.fromEntries(entries.map(([key, , version]) => [key, version])),
    names: Object.fromEntries(Object.entries(specs).map(([key, spec]) => [key, spec.name ?? key])),
  };
}
