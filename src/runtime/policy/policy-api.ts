/**
 * @module The request bodies of `/v1/policy` and `/v1/resources` (a backend is checked against
 * the Worker's registry, so they live beside the policy object), and what the API shows of the
 * policy. The answer's shape, `PolicyView`, is a wire type: src/schemas/policy.ts.
 */
import { z } from "zod";
import { SamplingDefaults, type PolicyView } from "../../schemas/policy";
import { PolicyBackend } from "./policy-backend";

/** Longest a `sync/begin` may wait for in-flight calls to drain: 10 minutes. */
export const MAX_SYNC_WAIT_MS = 600_000;

/**
 * Sampling keys to change. Built from SamplingDefaults without its defaults: `.partial()` would
 * fill every missing key with its default and so reset what the caller did not mention.
 */
export const SamplingPatch = z
  .object({
    temperature: SamplingDefaults.shape.temperature.unwrap().optional(),
    top_p: SamplingDefaults.shape.top_p.unwrap().optional(),
  })
  .strict();
export type SamplingPatch = z.infer<typeof SamplingPatch>;

/**
 * `PUT /v1/policy`: each field given replaces the current one (`null` restores the deployment
 * default for `model`/`backend`); `sampling` keys merge into the current sampling. The version is
 * not settable here: only `sync/end` moves it.
 */
export const PolicyUpdate = z
  .object({
    model: z.string().min(1, "model must not be empty").nullable().optional(),
    backend: PolicyBackend.nullable().optional(),
    sampling: SamplingPatch.optional(),
  })
  .strict();
export type PolicyUpdate = z.infer<typeof PolicyUpdate>;

/** `POST /v1/policy/sync/begin`: optionally wait up to `wait_ms` for in-flight calls to drain. */
export const SyncBeginRequest = z
  .object({
    wait_ms: z
      .int()
      .min(0, "wait_ms must be >= 0")
      .max(MAX_SYNC_WAIT_MS, `wait_ms must be <= ${MAX_SYNC_WAIT_MS}`)
      .optional(),
    /** The version the trainer intends to end with (recorded, not enforced). */
    policy_version: z.int().min(0, "policy_version must be >= 0").optional(),
    /**
     * `drain` (default): refuse new calls and wait for the ones in flight. `interrupt`: also cut every
     * plain call in flight (its tokens kept) and answer once no old-version generation runs; each
     * cut call resumes from token ids after `sync/end`. Calls with tools, response_format, penalties
     * or a seed are drained either way.
     */
    mode: z
      .enum(["drain", "interrupt"], { error: 'mode must be "drain" or "interrupt"' })
      .optional(),
  })
  .strict();
export type SyncBeginRequest = z.infer<typeof SyncBeginRequest>;

/** `POST /v1/policy/sync/end`: the version of the weights now loaded; must exceed the current one. */
export const SyncEndRequest = z
  .object({
    policy_version: z.int().min(0, "policy_version must be >= 0"),
  })
  .strict();
export type SyncEndRequest = z.infer<typeof SyncEndRequest>;

/** The immutable id of one resource version, `name@version`. */
export function resourceId(name: string, version: number): string {
  return `${name}@${version}`;
}

/** What a redacted secret reads as in `GET /v1/policy`. */
export const REDACTED = "[redacted]";

/** Backend fields that hold credentials (any backend: built-in or registered). */
const SECRET_FIELD = /(api_?key|secret|token|password|authorization)/i;

/**
 * The policy as the HTTP API shows it: backend credentials (`api_key` and the like) replaced by
 * REDACTED. The gateway needs them; no API reader does, and `GET /v1/policy` may be read by
 * anyone holding the API token (dashboards, trainers, CLIs).
 */
export function redactPolicy(view: PolicyView): PolicyView {
  if (!view.backend) return view;
  const backend = Object.fromEntries(
    Object.entries(view.backend).map(([key, value]) => [
      key,
      SECRET_FIELD.test(key) && value !== undefined && value !== null ? REDACTED : value,
    ]),
  );
  return { ...view, backend: backend as PolicyView["backend"] };
}

/**
 * A backend sent back as `GET /v1/policy` showed it keeps the stored credentials: each field that
 * reads REDACTED takes the current backend's value (a read-modify-write must not store the mask).
 */
export function restoreRedacted<B extends Record<string, unknown> | null | undefined>(
  patch: B,
  current: Record<string, unknown> | null,
): B {
  if (!patch || !current) return patch;
  return Object.fromEntries(
    Object.entries(patch).map(([key, value]) => [
      key,
      value === REDACTED && SECRET_FIELD.test(key) ? current[key] : value,
    ]),
  ) as B;
}
