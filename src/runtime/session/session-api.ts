/**
 * @module What a RolloutSession offers over RPC: the interface the class implements and the
 * object directory types its stubs by (src/runtime/objects/object-directory.ts), so no caller
 * needs the class, and a class that drifts from it does not compile.
 */
import type { UpstreamPath } from "../../gateway/model-backend";
import { methodNames } from "../../rpc-surface";
import type { JsonObject } from "../../schemas/json";
import type { LlmCall, LlmCallInput } from "../../schemas/llm-call";
import type { FinishRolloutRequest, RolloutSpec, RolloutView } from "../../schemas/rollout-api";
import type { ForkRecord } from "../../schemas/rollout-tree";
import type { Span, SpanInput } from "../../schemas/span";
import type { RequestCounts } from "../request-counter";
import type { SqlCounts } from "../sql-counter";
import type {
  AdmitCallResult,
  AttemptEndResult,
  BeginAttemptResult,
  CancelOptions,
  ClaimResult,
  CommitResult,
  CreateResult,
  FinishInput,
  FinishResult,
  GatewayWriteResult,
  HeartbeatResult,
  LeaseResult,
  RenewLeaseResult,
  SseEvent,
  StepCommit,
} from "./kernel";
import type { ForkPrefix, ForkSourceResult } from "./fork";
import type { RequestDriveResult } from "./lifecycle";
import type { GatewayCallMeta, GatewayCallResult } from "./calls";

/** One rollout's object (one per rollout, named by its id): its methods as the class declares them. */
export interface RolloutSessionApi {
  /** Requests served and SQLite statements and rows run since the object started; null when no rollout is stored here. */
  usageCounts(): { requests: RequestCounts; sqlite: SqlCounts } | null;
  /** Stores and announces a new rollout (idempotent by rollout id). */
  create(spec: RolloutSpec): Promise<CreateResult>;
  /** Tree rollouts: this rollout's spec, progress and its first `atStep` committed steps with their calls and spans (read-only). */
  forkSource(atStep: number): ForkSourceResult;
  /** Creates this rollout as a fork holding `prefix` (its parent's records, rebased here), idempotent by rollout id. */
  createFork(spec: RolloutSpec, prefix: ForkPrefix): Promise<CreateResult>;
  /** Lists a fork's children on this (parent) rollout, for its view and page. */
  recordFork(atStep: number, childIds: string[]): ForkRecord[] | null;
  /** Has the alarm drive the rollout now in its own invocation, unless a driver holds the lease. */
  requestDrive(): Promise<RequestDriveResult>;
  /** Grants a driver the lease and returns what it needs to resume. */
  lease(driverId: string): Promise<LeaseResult>;
  /** Commits one step and its LLM calls under a lease (idempotent by step id). */
  commitStep(leaseId: string, commit: StepCommit): Promise<CommitResult>;
  /** Releases the lease and re-enqueues the rollout for the next invocation. */
  handoff(leaseId: string): Promise<FinishResult>;
  /** Ends the rollout with a termination reason and reward. */
  finish(leaseId: string, input: FinishInput): Promise<FinishResult>;
  /** Counts and persists the next attempt of an attempt agent before its code runs. */
  beginAttempt(leaseId: string): BeginAttemptResult;
  /** Extends the lease of a driver whose attempt is still running. */
  renewLease(leaseId: string): RenewLeaseResult;
  /** The calls one attempt made, in order. */
  attemptCalls(attempt: number): LlmCall[];
  /** The results consumer's answer to this rollout's delivery check: confirmed, or the result is sent again. */
  deliveryChecked(held: boolean): Promise<void>;
  /** Cancels the rollout unless it already ended; `superseded`: its batch re-runs the slot (a KV-pressure requeue). */
  cancel(options?: CancelOptions): Promise<FinishResult>;
  /** The rollout's full view, or undefined if it was never created. */
  read(): RolloutView | undefined;
  /** An SSE byte stream of steps after `afterStepIndex` and of what follows, after `opening` when given. */
  subscribe(afterStepIndex: number, opening?: SseEvent): ReadableStream<Uint8Array> | undefined;
  /** Limits and replica for a gateway call, unless the rollout is missing or finished (or `attempt` is no longer live). */
  admitCall(attempt?: number): AdmitCallResult;
  /**
   * Runs a call of the rollout's gateway endpoint in the object, where it outlives the HTTP
   * request that asked for it: the upstream is read to its end, the call recorded and its
   * admission released whether the caller reads, stalls or hangs up (gateway-call-owner.ts).
   */
  gatewayCall(
    path: UpstreamPath,
    body: JsonObject & { stream?: boolean },
    meta: GatewayCallMeta & { rolloutId: string },
  ): Promise<GatewayCallResult>;
  /**
   * An `interrupt` weight sync replacing `replacedVersion` began: cuts every interruptible call
   * running here, and the calls of that version still opening their stream as they open (each
   * resumes after the sync), unless the version after the sync makes the rollout stale: it then
   * ends STALE and its calls stop (src/training/staleness.ts).
   */
  interruptCalls(replacedVersion?: number, inFlightSince?: number): number;
  /**
   * The policy version is (or a sync under way will end at least at) `policyVersion`: a rollout
   * that can no longer be trained at it ends STALE and its calls stop. `inFlightSince`: the oldest
   * version a call of it still generating was admitted under (its admission shard knows it before
   * the call is recorded). True when it is ended STALE.
   */
  staleCheck(policyVersion: number, inFlightSince?: number): boolean;
  /** Registers (null: drops) the interrupt of a call the rollout's driver runs in its own invocation (an RPC function stub). */
  remoteCallInterrupt(callId: string, interrupt: (() => void) | null, legVersion?: number): void;
  /** The caller of a streamed call this object runs has left: the call is recorded as one nobody received. */
  callerLeft(callId: string): void;
  /** Grants a runner the next attempt of an external rollout offered to runners. */
  claim(runnerId: string, leaseMs: number): Promise<ClaimResult>;
  /** Renews the lease of the runner holding `attempt`. */
  heartbeat(attempt: number, runnerId: string, leaseMs: number): HeartbeatResult;
  /** Ends the rollout with the outcome of the attempt a runner holds. */
  finishAttempt(
    attempt: number,
    runnerId: string,
    input: FinishRolloutRequest,
  ): Promise<AttemptEndResult>;
  /** A runner hands its attempt back (shutdown) or reports it crashed. */
  releaseAttempt(
    attempt: number,
    runnerId: string,
    reason: "shutdown" | "crashed",
    error: string | null,
  ): Promise<AttemptEndResult>;
  /** Records a call made through the rollout's gateway endpoint. */
  recordCall(call: LlmCallInput): GatewayWriteResult;
  /** Corrects a recorded call's `policy_version_end` (a weight sync ended while it ran). */
  amendCallVersion(callId: string, versionEnd: number): GatewayWriteResult;
  /** Appends spans (rewards, messages, …) in order. */
  addEvents(
    events: SpanInput[],
  ): { ok: true; spans: Span[] } | Exclude<GatewayWriteResult, { ok: true }>;
  /** Ends an external rollout with its reported outcome. */
  finishExternal(
    input: FinishRolloutRequest,
  ): FinishResult | Exclude<GatewayWriteResult, { ok: true }>;
  /** Ends an external rollout whose call the gateway refused for a limit. */
  endForLimit(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string): void;
  /**
   * Deletes everything this object stores, its alarm included (an online session deleted on
   * request or past its retention: users' conversations are personal data); afterwards it is
   * empty, as if never created.
   */
  purge(): Promise<void>;
}

/** Every method of RolloutSessionApi, at run time. */
export const ROLLOUT_SESSION_METHODS = methodNames<RolloutSessionApi>({
  usageCounts: true,
  create: true,
  forkSource: true,
  createFork: true,
  recordFork: true,
  requestDrive: true,
  lease: true,
  commitStep: true,
  handoff: true,
  finish: true,
  beginAttempt: true,
  renewLease: true,
  attemptCalls: true,
  deliveryChecked: true,
  cancel: true,
  read: true,
  subscribe: true,
  admitCall: true,
  gatewayCall: true,
  interruptCalls: true,
  staleCheck: true,
  remoteCallInterrupt: true,
  callerLeft: true,
  claim: true,
  heartbeat: true,
  finishAttempt: true,
  releaseAttempt: true,
  recordCall: true,
  amendCallVersion: true,
  addEvents: true,
  finishExternal: true,
  endForLimit: true,
  purge: true,
});
