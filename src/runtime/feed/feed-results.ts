/** @module Result shapes of the trainer feed's RPC methods: expected failures are values, not throws. */
import type { FeedConfig, FeedGroup, PullResponse } from "../../schemas/feed";

/** One invalid field, by dot path, as problem+json reports it. */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * `ingest`: what happened to one result. `held`: waiting for the rest of its group;
 * `completed`: its group is now ready; `duplicate`: this rollout id was ingested before;
 * `late`: its group was already released (or acked, or dropped) or already holds its sample index;
 * `superseded`: an infrastructure failure whose slot is re-run (never a member); `withheld`: it
 * completed its group, which was dropped instead of delivered (see src/training/group-verdict.ts).
 */
export type IngestResult =
  | { ok: true; outcome: "held" | "completed"; uid: string; arrived: number; group_size: number }
  | {
      ok: true;
      outcome: "withheld";
      uid: string;
      reason: "cut" | "cancelled" | "infra_failure" | "no_signal";
      arrived: number;
      group_size: number;
    }
  | { ok: true; outcome: "duplicate" | "late" | "superseded"; uid: string }
  | {
      ok: false;
      reason: "invalid" | "unknown_training_mode" | "group_mismatch";
      errors: FieldIssue[];
    };

/** `pull`: leased groups (none when nothing is ready), or the fields that did not validate. */
export type PullResult =
  ({ ok: true } & PullResponse<FeedGroup>) | { ok: false; reason: "invalid"; errors: FieldIssue[] };

/**
 * `ack`: the groups deleted (`already` when this lease was acked before), or why not: the lease
 * is unknown, or expired (its groups went back to the feed and will be delivered again).
 */
export type AckResult =
  | { ok: true; lease_id: string; acked_groups: number; already: boolean }
  | { ok: false; reason: "unknown_lease" | "lease_expired"; lease_id: string };

/** `configure`: the config now in force, or the fields that did not validate. */
export type ConfigureResult =
  { ok: true; config: FeedConfig } | { ok: false; reason: "invalid"; errors: FieldIssue[] };

/** The zod issues of a failed parse as field issues (`(body)` when the whole body is wrong). */
export function issuesOf(error: {
  issues: Array<{ path: PropertyKey[]; message: string }>;
}): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
}
