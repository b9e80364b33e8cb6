/** @module The policy object's mutable state, persisted as one validated row. */
import { z } from "zod";
import { BackendConfig } from "../../schemas/backend-config";
import { SamplingDefaults, SyncState, type PolicySnapshot } from "../../schemas/policy";
import type { AdmissionFence } from "./admission-fence";

/** Version of the persisted PolicyState shape. */
export const POLICY_STATE_SCHEMA_VERSION = 1;

/** The policy in force and whether a weight sync is under way (in-flight calls and resources live in their own tables). */
export const PolicyState = z
  .object({
    schema_version: z.literal(POLICY_STATE_SCHEMA_VERSION),
    /** Bumped only by `endSync`, after the trainer has pushed new weights. */
    policy_version: z.int().min(0),
    /** null: the deployment default (`LLM_MODEL`). */
    model: z.string().min(1).nullable(),
    /** null: the deployment default (`LLM_BASE_URL`). */
    backend: BackendConfig.nullable(),
    sampling: SamplingDefaults,
    syncing: SyncState.nullable(),
    /** Grows with every change; orders the fences pushed to the admission shards (absent in rows written before shards: 0). */
    generation: z.int().min(0).default(0),
    updated_at: z.number(),
  })
  .strict();
export type PolicyState = z.infer<typeof PolicyState>;

/** The policy before anyone configured it: version 0, deployment defaults, default sampling. */
export function initialPolicyState(now: number): PolicyState {
  return {
    schema_version: POLICY_STATE_SCHEMA_VERSION,
    policy_version: 0,
    model: null,
    backend: null,
    sampling: SamplingDefaults.parse({}),
    syncing: null,
    generation: 0,
    updated_at: now,
  };
}

/** The part of the state a model call needs. */
export function snapshotOf(state: PolicyState): PolicySnapshot {
  return {
    policy_version: state.policy_version,
    model: state.model,
    backend: state.backend,
    sampling: state.sampling,
  };
}

/** The fence the admission shards enforce for `state`. */
export function fenceOf(
  state: PolicyState,
  resources: Record<string, number> = {},
): AdmissionFence {
  return {
    generation: state.generation,
    snapshot: snapshotOf(state),
    syncing: state.syncing !== null,
    interrupt: state.syncing?.mode === "interrupt",
    resources,
  };
}
