/** @module The policy a trainer controls: version, model, backend, sampling defaults. */
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
