/** @module The Durable Object that holds one rollout: typed RPC methods over RolloutSessionCore. */
import type { DeliveryCheckMessage } from "../src/schemas/delivery-check-message";
import { onDeliveryChecked } from "../src/runtime/session/result-delivery";
import { DurableObject } from "cloudflare:workers";
import { r2Blobs } from "../src/sink/publication/r2-blobs";
import { CountingSql, type SqlCounts } from "../src/runtime/sql-counter";
import { RequestCounter, type RequestCounts } from "../src/runtime/request-counter";
import type { FinishRolloutRequest, RolloutSpec, RolloutView } from "../src/schemas/rollout-api";
import type { LlmCallInput } from "../src/schemas/llm-call";
import type { Span, SpanInput } from "../src/schemas/span";
import { RolloutSessionCore } from "../src/runtime/session/rollout-session-core";
import { SessionKernel } from "../src/runtime/session/session-kernel";
import { SessionGatewayOps } from "../src/runtime/session/session-gateway";
import { SessionAttemptOps } from "../src/runtime/session/session-attempts";
import { type ForkSourceResult, SessionForkOps } from "../src/runtime/session/session-fork";
import type { ForkPrefix } from "../src/runtime/session/fork-prefix";
import type { SseEvent } from "../src/runtime/session/event-hub";
import type { ForkRecord } from "../src/schemas/rollout-tree";
import type { LlmCall } from "../src/schemas/llm-call";
import { shardOf } from "../src/runtime/claims/claim-shards";
import { objects } from "../src/runtime/objects/object-directory";
import type {
  GatewayCallMeta,
  GatewayCallResult,
  RolloutSessionApi,
} from "../src/runtime/session/session-api";
import type { DriveTrigger } from "../src/ports";
import type { RequestDriveResult } from "../src/runtime/session/session-drive";
import { gatewayFor } from "../src/runtime/gateway-deps";
import type { UpstreamPath } from "../src/gateway/model-backend";
import type { JsonObject } from "../src/schemas/json";
import { SessionCalls } from "../src/runtime/session/session-calls";
import type {
  AdmitCallResult,
  AttemptEndResult,
  BeginAttemptResult,
  ClaimResult,
  HeartbeatResult,
  CommitResult,
  CreateResult,
  FinishInput,
  FinishResult,
  GatewayWriteResult,
  LeaseResult,
  RenewLeaseResult,
  StepCommit,
} from "../src/runtime/session/session-results";

/**
 * Calls the Worker's own drive route for one rollout through the `DRIVER` service binding: a
 * separate invocation with its own 6 connections, whose CPU counts toward this alarm's budget
 * (Workers reached through a service binding share the CPU of the top-level request).
 */
function driveTrigger(env: Env): DriveTrigger | undefined {
  const driver = env.DRIVER as Fetcher | undefined;
  if (!driver) return undefined;
  return async (rolloutId, signal) => {
    const response = await driver.fetch(
      `https://driver.internal/drive/${encodeURIComponent(rolloutId)}`,
      { method: "POST", signal },
    );
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`drive route answered ${response.status}`);
  };
}

/**
 * One rollout's conversation, steps, LLM calls and lease, in SQLite. Single-writer by
 * construction, so leases and idempotent commits need no further locking.
 */
export class RolloutSession extends DurableObject<Env> implements RolloutSessionApi {
  readonly #core: RolloutSessionCore;
  readonly #gateway: SessionGatewayOps;
  readonly #attempts: SessionAttemptOps;
  readonly #fork: SessionForkOps;
  readonly #sql: CountingSql;
  readonly #requests = new RequestCounter();
  readonly #kernel: SessionKernel;
  /** The gateway calls running here: their callers, their flights, and the calls a restart cut. */
  readonly #calls: SessionCalls;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    const others = objects(env);
    this.#sql = new CountingSql(storage.sql);
    const kernel = new SessionKernel({
      storage: {
        sql: this.#sql,
        transactionSync: (fn) => storage.transactionSync(fn),
        // While gateway calls run, the alarm stays within their flight check (session-calls.ts).
        setAlarm: (time) => storage.setAlarm(this.#calls.alarmTime(time)),
        deleteAlarm: () =>
          this.#calls.inFlight
            ? storage.setAlarm(this.#calls.alarmTime(Number.MAX_SAFE_INTEGER))
            : storage.deleteAlarm(),
      },
      queue: { send: async (message) => void (await env.ROLLOUT_WORK.send(message)) },
      now: () => Date.now(),
      sink: {
        blobs: r2Blobs(env.TRAJECTORIES),
        results: { send: async (message) => void (await env.ROLLOUT_RESULTS.send(message)) },
        now: () => Date.now(),
        // Answered by the results consumer, which asks each feed shard once per batch of checks.
        requestDeliveryCheck: async (rolloutId, uid) =>
          void (await env.ROLLOUT_RESULTS.send({
            kind: "delivery_check",
            rollout_id: rolloutId,
            uid,
          } satisfies DeliveryCheckMessage)),
      },
      claims: {
        offer: async (runnerAgent, rolloutId) => {
          await others.claims(runnerAgent, shardOf(rolloutId)).offer(rolloutId);
        },
      },
      runnerEvents: {
        report: async (batchId, event) => {
          await others.batch(batchId).runnerEvent(event);
        },
      },
      drive: driveTrigger(env),
      releaseAdmissions: async (rolloutId) => {
        await others.shard(rolloutId).releaseRollout(rolloutId);
      },
    });
    this.#kernel = kernel;
    // One kernel, four parts: the driver-facing lifecycle, the gateway's calls, the attempts, forks.
    this.#core = new RolloutSessionCore(kernel);
    this.#gateway = new SessionGatewayOps(kernel);
    this.#attempts = new SessionAttemptOps(kernel);
    this.#fork = new SessionForkOps(kernel);
    this.#calls = new SessionCalls(kernel, this.#gateway, {
      rolloutId: () => kernel.spec?.rollout_id,
      gateway: () => gatewayFor(env),
      keepAlive: (work) => ctx.waitUntil(work),
      getAlarm: () => storage.getAlarm(),
      setAlarm: (time) => storage.setAlarm(time),
      now: () => Date.now(),
    });
  }

  /**
   * The requests this object served (RPC methods and alarms; this one not counted) and the SQLite
   * statements and rows it ran, since it started (in memory, so an evicted object starts again
   * at 0): what a rollout costs in Durable Object units. Null when no rollout is stored here.
   */
  usageCounts(): { requests: RequestCounts; sqlite: SqlCounts } | null {
    return this.#kernel.spec === undefined
      ? null
      : { requests: this.#requests.read(), sqlite: this.#sql.read() };
  }

  /** Stores and announces a new rollout (idempotent by rollout id). */
  create(spec: RolloutSpec): Promise<CreateResult> {
    this.#requests.count("create");
    return this.#core.create(spec);
  }

  /** Tree rollouts: this rollout's spec, progress and its first `atStep` committed steps with their calls and spans (read-only). */
  forkSource(atStep: number): ForkSourceResult {
    this.#requests.count("forkSource");
    return this.#fork.forkSource(atStep);
  }

  /** Creates this rollout as a fork holding `prefix` (its parent's records, rebased here), idempotent by rollout id. */
  createFork(spec: RolloutSpec, prefix: ForkPrefix): Promise<CreateResult> {
    this.#requests.count("createFork");
    return this.#fork.createFork(spec, prefix);
  }

  /** Lists a fork's children on this (parent) rollout, for its view and page. */
  recordFork(atStep: number, childIds: string[]): ForkRecord[] | null {
    this.#requests.count("recordFork");
    return this.#fork.recordFork(atStep, childIds);
  }

  /** Has the alarm drive the rollout now in its own invocation, unless a driver holds the lease. */
  requestDrive(): Promise<RequestDriveResult> {
    this.#requests.count("requestDrive");
    return this.#core.drive.requestDrive();
  }

  /** Grants a driver the lease and returns what it needs to resume. */
  lease(driverId: string): Promise<LeaseResult> {
    this.#requests.count("lease");
    return this.#core.lease(driverId);
  }

  /** Commits one step and its LLM calls under a lease (idempotent by step id). */
  commitStep(leaseId: string, commit: StepCommit): Promise<CommitResult> {
    this.#requests.count("commitStep");
    return this.#core.commitStep(leaseId, commit);
  }

  /** Releases the lease and re-enqueues the rollout for the next invocation. */
  handoff(leaseId: string): Promise<FinishResult> {
    this.#requests.count("handoff");
    return this.#core.handoff(leaseId);
  }

  /** Ends the rollout with a termination reason and reward. */
  finish(leaseId: string, input: FinishInput): Promise<FinishResult> {
    this.#requests.count("finish");
    return this.#core.finish(leaseId, input);
  }

  /** Counts and persists the next attempt of an attempt agent before its code runs. */
  beginAttempt(leaseId: string): BeginAttemptResult {
    this.#requests.count("beginAttempt");
    return this.#attempts.beginAttempt(leaseId);
  }

  /** Extends the lease of a driver whose attempt is still running. */
  renewLease(leaseId: string): RenewLeaseResult {
    this.#requests.count("renewLease");
    return this.#attempts.renewLease(leaseId);
  }

  /** The calls one attempt made, in order. */
  attemptCalls(attempt: number): LlmCall[] {
    this.#requests.count("attemptCalls");
    return this.#attempts.attemptCalls(attempt);
  }

  /** The results consumer's answer to this rollout's delivery check: confirmed, or the result is sent again. */
  async deliveryChecked(held: boolean): Promise<void> {
    this.#requests.count("deliveryChecked");
    // A re-send runs on after the answer: the consumer must not wait on its own queue.
    const { resending } = await onDeliveryChecked(this.#kernel, held);
    if (resending !== undefined) this.ctx.waitUntil(resending);
  }

  /** Cancels the rollout unless it already ended. */
  cancel(): Promise<FinishResult> {
    this.#requests.count("cancel");
    return this.#core.cancel();
  }

  /** The rollout's full view, or undefined if it was never created. */
  read(): RolloutView | undefined {
    this.#requests.count("read");
    return this.#core.read();
  }

  /** An SSE byte stream of steps after `afterStepIndex` and of what follows, after `opening` when given. */
  subscribe(afterStepIndex: number, opening?: SseEvent): ReadableStream<Uint8Array> | undefined {
    this.#requests.count("subscribe");
    return this.#core.subscribe(afterStepIndex, opening);
  }

  /** Limits and replica for a gateway call, unless the rollout is missing or finished (or `attempt` is no longer live). */
  admitCall(attempt?: number): AdmitCallResult {
    this.#requests.count("admitCall");
    return this.#gateway.admitCall(attempt);
  }

  /**
   * Runs a call of the rollout's gateway endpoint here, where it outlives the HTTP request that
   * asked for it: the upstream is read to its end, the call recorded and its admission released
   * whether the caller reads, stalls or hangs up (gateway-call-owner.ts).
   */
  gatewayCall(
    path: UpstreamPath,
    body: JsonObject & { stream?: boolean },
    meta: GatewayCallMeta & { rolloutId: string },
  ): Promise<GatewayCallResult> {
    this.#requests.count("gatewayCall");
    return this.#calls.call(path, body, meta);
  }

  /**
   * An `interrupt` weight sync replacing `replacedVersion` began: cuts every interruptible call
   * running here, and the calls of that version still opening their stream as they open (each
   * resumes after the sync).
   */
  interruptCalls(replacedVersion?: number): number {
    this.#requests.count("interruptCalls");
    return this.#calls.callers.interruptAll(replacedVersion);
  }

  /** Registers (null: drops) the interrupt of a call the rollout's driver runs in its own invocation (an RPC function stub). */
  remoteCallInterrupt(callId: string, interrupt: (() => void) | null, legVersion?: number): void {
    this.#requests.count("remoteCallInterrupt");
    this.#calls.callers.setRemoteInterrupt(callId, interrupt, legVersion);
  }

  /** The caller of a streamed call this object runs has left: the call is recorded as one nobody received. */
  callerLeft(callId: string): void {
    this.#requests.count("callerLeft");
    this.#calls.callers.left(callId);
  }

  /** Grants a runner the next attempt of an external rollout offered to runners. */
  claim(runnerId: string, leaseMs: number): Promise<ClaimResult> {
    this.#requests.count("claim");
    return this.#core.claims.claim(runnerId, leaseMs);
  }

  /** Renews the lease of the runner holding `attempt`. */
  heartbeat(attempt: number, runnerId: string, leaseMs: number): HeartbeatResult {
    this.#requests.count("heartbeat");
    return this.#core.claims.heartbeat(attempt, runnerId, leaseMs);
  }

  /** Ends the rollout with the outcome of the attempt a runner holds. */
  finishAttempt(
    attempt: number,
    runnerId: string,
    input: FinishRolloutRequest,
  ): Promise<AttemptEndResult> {
    this.#requests.count("finishAttempt");
    return this.#core.claims.finishAttempt(attempt, runnerId, input);
  }

  /** A runner hands its attempt back (shutdown) or reports it crashed. */
  releaseAttempt(
    attempt: number,
    runnerId: string,
    reason: "shutdown" | "crashed",
    error: string | null,
  ): Promise<AttemptEndResult> {
    this.#requests.count("releaseAttempt");
    return this.#core.claims.releaseAttempt(attempt, runnerId, reason, error);
  }

  /** Records a call made through the rollout's gateway endpoint. */
  recordCall(call: LlmCallInput): GatewayWriteResult {
    this.#requests.count("recordCall");
    return this.#gateway.recordCall(call);
  }

  /** Corrects a recorded call's `policy_version_end` (a weight sync ended while it ran). */
  amendCallVersion(callId: string, versionEnd: number): GatewayWriteResult {
    this.#requests.count("amendCallVersion");
    return this.#gateway.amendCallVersion(callId, versionEnd);
  }

  /** Appends spans (rewards, messages, …) in order. */
  addEvents(
    events: SpanInput[],
  ): { ok: true; spans: Span[] } | Exclude<GatewayWriteResult, { ok: true }> {
    this.#requests.count("addEvents");
    return this.#gateway.addEvents(events);
  }

  /** Ends an external rollout with its reported outcome. */
  finishExternal(
    input: FinishRolloutRequest,
  ): FinishResult | Exclude<GatewayWriteResult, { ok: true }> {
    this.#requests.count("finishExternal");
    return this.#gateway.finishExternal(input);
  }

  /** Ends an external rollout whose call the gateway refused for a limit. */
  endForLimit(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string): void {
    this.#requests.count("endForLimit");
    this.#gateway.endForLimit(reason, message);
  }

  /** The watchdog. */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    // A restarted object runs on the calls its restart cut before anything else (session-calls.ts).
    this.#calls.resumeCut();
    await this.#core.onAlarm();
    await this.#calls.afterAlarm();
  }
}
