/** @module What a driver calls on a rollout session (a Durable Object stub satisfies it). */
import type { LlmCall } from "../../schemas/llm-call";
import type { Span, SpanInput } from "../../schemas/span";
import type {
  BeginAttemptResult,
  CommitResult,
  FinishInput,
  FinishResult,
  GatewayWriteResult,
  LeaseResult,
  RenewLeaseResult,
  StepCommit,
} from "./session-results";

/** The driver's view of one rollout session. */
export interface SessionHandle {
  lease(driverId: string): Promise<LeaseResult>;
  commitStep(leaseId: string, commit: StepCommit): Promise<CommitResult>;
  /** Sets a stored call's `policy_version_end` (its release reported a newer version than it was admitted under). */
  amendCallVersion(callId: string, versionEnd: number): Promise<GatewayWriteResult>;
  finish(leaseId: string, input: FinishInput): Promise<FinishResult>;
  handoff(leaseId: string): Promise<FinishResult>;
  /** Attempt engines: counts (and persists) the next attempt before its user code runs. */
  beginAttempt(leaseId: string): Promise<BeginAttemptResult>;
  /** Attempt engines: extends the lease while a long attempt is alive. */
  renewLease(leaseId: string): Promise<RenewLeaseResult>;
  /** Appends spans (emitters) in order. */
  addEvents(
    events: SpanInput[],
  ): Promise<{ ok: true; spans: Span[] } | Exclude<GatewayWriteResult, { ok: true }>>;
  /** The calls one attempt made, in order (a workflow's sample when it returns no messages). */
  attemptCalls(attempt: number): Promise<LlmCall[]>;
}

/** Finds the session of a rollout by id. */
export interface SessionLocator {
  get(rolloutId: string): SessionHandle;
}
