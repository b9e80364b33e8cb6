/**
 * @module The policy a trainer controls (version, model, backend, sampling defaults) and how
 * `GET /v1/policy` shows it, with the weight sync under way and the named resources.
 */
import { z } from "zod";
import { BackendConfig } from "./backend-config";

/** Sampling parameters the trainer owns; in training mode the gateway overrides a caller's values with these. */
export const SamplingDefaults = z
  .object({
    temperature: z
      .number()
      .min(0, "temperature must be >= 0")
      .max(2, "temperature must be <= 2")
      .default(1),
    top_p: z.number().gt(0, "top_p must be > 0").max(1, "top_p must be <= 1").default(1),
  })
  .strict();
export type SamplingDefaults = z.infer<typeof SamplingDefaults>;

/**
 * What the gateway needs for one call, handed out by the policy object with each admission.
 * `backend` null means the deployment default (`LLM_BASE_URL`); `model` null means `LLM_MODEL`.
 */
export const PolicySnapshot = z.object({
  policy_version: z.int().min(0),
  model: z.string().min(1).nullable(),
  backend: BackendConfig.nullable(),
  sampling: SamplingDefaults,
});
export type PolicySnapshot = z.infer<typeof PolicySnapshot>;

/** Admission of one model call: allowed with the current policy, or refused while weights sync. */
export type PolicyAdmission =
  | ({ ok: true } & PolicySnapshot)
  | { ok: false; reason: "syncing"; retry_after_s: number; policy_version: number };

/** A weight sync under way: set by `beginSync`, cleared by `endSync`. */
export const SyncState = z
  .object({
    since: z.number(),
    /** The version the trainer said it will end with, if it said (informational; `endSync` decides). */
    requested_version: z.int().min(0).optional(),
    /** `drain` (absent: rows written before modes) waits calls out; `interrupt` cuts plain calls and resumes them after `endSync`. */
    mode: z.enum(["drain", "interrupt"]).optional(),
  })
  .strict();
export type SyncState = z.infer<typeof SyncState>;

/** A resource's name: what goes in `/v1/resources/:name` and before the `@` of its id. */
export const ResourceName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, "name must be 1-64 characters of A-Z a-z 0-9 _ . -")
  .refine(
    (name) => name !== "." && name !== "..",
    "name must not be . or .. (URL normalization would make it unreachable)",
  );
export type ResourceName = z.infer<typeof ResourceName>;

/** A resource name with its latest version. */
export const ResourceVersion = z.object({ name: ResourceName, version: z.int().min(1) });
export type ResourceVersion = z.infer<typeof ResourceVersion>;

/** `GET /v1/policy`: the snapshot the gateway hands out, plus sync state, load and resources. */
export const PolicyView = PolicySnapshot.extend({
  syncing: SyncState.nullable(),
  /** Model calls admitted and not yet released (expired ones are not counted). */
  in_flight: z.int().min(0),
  resources: z.array(ResourceVersion),
  updated_at: z.number(),
});
export type PolicyView = z.infer<typeof PolicyView>;
