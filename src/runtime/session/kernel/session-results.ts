/** @module Result unions of the session's RPC methods: expected failures are values, not throws. */
import type { LlmCall, LlmCallInput } from "../../../schemas/llm-call";
import type { JsonValue } from "../../../schemas/json";
import type { RolloutSpec } from "../../../schemas/rollout-api";
import type { ChatMessage } from "../../../schemas/chat";
import type { StepInput } from "../../../schemas/step";
import type { SpanInput } from "../../../schemas/span";
import type { RolloutStatus, TerminationReason } from "../../../schemas/termination";
import type { OutcomeHint } from "../../../schemas/member-outcome";
import type { Lease } from "./session-state";
import type { CallLimits } from "../../../gateway/request-shaping";
import type { StoredStep } from "./session-store";

/** `create`: new or the same rollout again; a different rollout under the same id conflicts. */
export type CreateResult =
  | { ok: true; created: boolean; rollout_id: string; status: RolloutStatus }
  | { ok: false; reason: "conflict"; message: string };

/** What a driver needs to rebuild the agent and env: committed steps and a summary of every call. */
export interface ResumeState {
  spec: RolloutSpec;
  steps: StoredStep[];
  calls: Array<{
    call_id: string;
    step_id: string | null;
    response_message: LlmCall["response_message"];
    finish_reason: string | null;
  }>;
  completion_tokens: number;
  last_context_tokens: number;
  last_context_messages: number;
  last_replica: string | null;
  /** The oldest policy version among the rollout's tokens so far (null: no call yet). */
  oldest_policy_version: number | null;
  deadline: number;
}

/** `lease`: the lease and the state to resume from, or why not. */
export type LeaseResult =
  | { ok: true; lease: Lease; resume: ResumeState }
  | { ok: false; reason: "terminal" | "held" | "not_found"; status: RolloutStatus | null };

/** One step with the calls made for it and the env snapshot after it. */
export interface StepCommit {
  step: StepInput;
  llm_calls: LlmCallInput[];
  env_snapshot: JsonValue | null;
  /** What the step's agent and env emitted (emitReward, emitObject, …), stored with the step. */
  spans?: SpanInput[];
}

/** `commitStep`: stored (or already stored), or refused. */
export type CommitResult =
  | { ok: true; duplicate: boolean; lease: Lease }
  | {
      ok: false;
      reason: "stale_lease" | "terminal" | "out_of_order" | "invalid" | "not_found";
      message: string;
    };

/** How the driver ends a rollout. */
export interface FinishInput {
  termination_reason: TerminationReason;
  reward: number | null;
  error: string | null;
  /** Whether a TIMEOUT or a user-code error is the policy's doing (see outcomeOf); default by reason. */
  outcome?: OutcomeHint | null;
  /** Attempt agents: the attempt whose outcome this is (calls of other attempts are excluded from training). */
  final_attempt?: number | null;
  /** The runner of `final_attempt`, when a runner finished it. */
  final_runner_id?: string | null;
  /** The final conversation (a workflow's output), kept as the rollout's `final_messages`. */
  messages?: ChatMessage[];
  /**
   * The driver knows every call it made for the rollout released at its admission shard (its
   * releases landed, none is in doubt): publication then skips the rollout-wide release. Trusted
   * only from the rollout's first lease (a takeover may leave an earlier driver's calls behind).
   */
  admissions_released?: boolean;
  /** Cancelled to run again (`CancelOptions.superseded`): the published result says so. */
  superseded?: boolean;
}

/** How `cancel` ends the rollout (default: a plain cancel, the rollout cut). */
export interface CancelOptions {
  /**
   * Its batch re-runs the slot (a KV-pressure requeue): the rollout's result is published
   * superseded, so the trainer feed waits for the re-run instead of holding this run as a member.
   */
  superseded?: boolean;
}

/** `beginAttempt`: the number of the attempt that may start now, or why none may. */
export type BeginAttemptResult =
  | { ok: true; attempt: number; lease: Lease }
  | { ok: false; reason: "exhausted"; attempts: number }
  | { ok: false; reason: "stale_lease" | "terminal" | "not_found"; attempts: number };

/** `renewLease`: the extended lease, or why it is no longer this driver's. */
export type RenewLeaseResult =
  { ok: true; lease: Lease } | { ok: false; reason: "stale_lease" | "terminal" | "not_found" };

/** `finish`/`cancel`: the terminal outcome (`already` when it was terminal before the call). */
export type FinishResult =
  | {
      ok: true;
      already: boolean;
      status: RolloutStatus;
      termination_reason: TerminationReason | null;
    }
  | { ok: false; reason: "stale_lease" | "not_found" | "terminal"; status: RolloutStatus | null };

/** What the gateway needs before forwarding a call for this rollout. */
export type AdmitCallResult =
  | {
      ok: true;
      kind: "driven" | "external";
      train: boolean;
      model: string | null;
      limits: CallLimits;
      replica_hint: string | null;
      /** How long the call may count as in flight without a release (the rollout's lease ttl). */
      call_ttl_ms: number;
    }
  | { ok: false; reason: "not_found" | "terminal" | "superseded"; status: RolloutStatus | null };

/** Results of the gateway-facing writes. */
export type GatewayWriteResult =
  | { ok: true }
  | { ok: false; reason: "not_found" | "terminal" | "invalid" | "driven"; message: string };

/** `claim`: the attempt a runner may run now (with the spec it needs), or why not. */
export type ClaimResult =
  | { ok: true; attempt: number; lease: Lease; spec: RolloutSpec }
  | { ok: false; reason: "not_found" | "not_claimable" | "terminal" | "held" };

/** `heartbeat`: the renewed lease, or why the runner must stop. */
export type HeartbeatResult =
  | { ok: true; lease: Lease; batch_id: string | null }
  | { ok: false; reason: "lost" | "terminal" | "not_found" };

/** `finishAttempt` / `releaseAttempt`: the rollout's status after it, or why the runner may not. */
export type AttemptEndResult =
  | { ok: true; status: RolloutStatus; termination_reason: TerminationReason | null }
  | { ok: false; reason: "lost" | "terminal" | "not_found"; message: string };
