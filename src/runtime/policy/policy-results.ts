/** @module Result shapes of the policy object's RPC methods: expected failures are values, not throws. */
import type { JsonValue } from "../../schemas/json";
import type { PolicyView } from "../../schemas/policy";

/** One invalid field, by dot path (`sampling.temperature`), as problem+json reports it. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** `update`: the policy after the change, or the fields that did not validate. */
export type UpdateResult =
  { ok: true; policy: PolicyView } | { ok: false; reason: "invalid"; errors: FieldIssue[] };

/** `beginSync`: the version in force and the calls still in flight (`already` when a sync was under way). */
export interface BeginSyncResult {
  policy_version: number;
  in_flight: number;
  already: boolean;
  /** Set when the sync was refused: a `drain` sync is under way and an `interrupt` one was asked for. */
  conflict?: "drain";
}

/** `waitIdle`: calls still in flight when it returned (0 unless the timeout passed first). */
export interface WaitIdleResult {
  in_flight: number;
}

/** `endSync`: the new version, or why the sync could not end. */
export type EndSyncResult =
  | { ok: true; policy_version: number; previous_version: number }
  | { ok: false; reason: "not_syncing" | "version_not_newer"; policy_version: number };

/** `abortSync`: the sync ended with the version it began under, or there was none. */
export type AbortSyncResult =
  | { ok: true; policy_version: number }
  | { ok: false; reason: "not_syncing"; policy_version: number };

/** `release`: the version in force when the call ended (its `policy_version_end`). */
export interface ReleaseResult {
  policy_version: number;
}

/** Where a resource version is found: `id` is `name@version` and never changes meaning. */
export interface ResourceRef {
  name: string;
  version: number;
  id: string;
}

/** `putResource`: the version just stored, or the invalid field (`name` or `value`). */
export type PutResourceResult =
  ({ ok: true } & ResourceRef) | { ok: false; reason: "invalid"; errors: FieldIssue[] };

/** One stored resource version with its value. */
export interface ResourceRecord extends ResourceRef {
  value: JsonValue;
  created_at: number;
}

/** `getResource`: the version asked for (the latest by default), or not found. */
export type GetResourceResult =
  ({ ok: true } & ResourceRecord) | { ok: false; reason: "not_found" };
