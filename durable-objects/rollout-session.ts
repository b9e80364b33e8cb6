/** @module The Durable Object that holds one rollout: its RPC methods, each served by a part of the session (session-parts.ts). */
import { DurableObject } from "cloudflare:workers";
import { installSurface } from "../src/runtime/objects";
import { RequestCounter, type RequestCounts, type SqlCounts } from "../src/runtime";
import { onDeliveryChecked, type RolloutSessionApi } from "../src/runtime/session";
import { sessionParts, type SessionParts } from "../src/runtime/session/session-parts";

/** The methods installed from the table below; the class writes out the rest of RolloutSessionApi. */
type Installed = Omit<RolloutSessionApi, "usageCounts" | "deliveryChecked" | "purge">;

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface RolloutSession extends Installed {}

/**
 * One rollout's conversation, steps, LLM calls and lease, in SQLite. Single-writer by
 * construction, so leases and idempotent commits need no further locking. Each RPC method counts
 * one request to its name and calls the part that serves it.
 */
export class RolloutSession extends DurableObject<Env> implements RolloutSessionApi {
  #parts: SessionParts;
  readonly #requests = new RequestCounter();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#parts = sessionParts(ctx, env);
  }

  static {
    installSurface<RolloutSession, Installed>(RolloutSession, (s) => s.#requests, {
      create: (s, spec) => s.#parts.core.create(spec),
      forkSource: (s, atStep) => s.#parts.fork.forkSource(atStep),
      createFork: (s, spec, prefix) => s.#parts.fork.createFork(spec, prefix),
      recordFork: (s, atStep, childIds) => s.#parts.fork.recordFork(atStep, childIds),
      requestDrive: (s) => s.#parts.core.drive.requestDrive(),
      lease: (s, driverId) => s.#parts.core.lease(driverId),
      commitStep: (s, leaseId, commit) => s.#parts.core.commitStep(leaseId, commit),
      handoff: (s, leaseId) => s.#parts.core.handoff(leaseId),
      finish: (s, leaseId, input) => s.#parts.core.finish(leaseId, input),
      beginAttempt: (s, leaseId) => s.#parts.attempts.beginAttempt(leaseId),
      renewLease: (s, leaseId) => s.#parts.attempts.renewLease(leaseId),
      attemptCalls: (s, attempt) => s.#parts.attempts.attemptCalls(attempt),
      cancel: (s, options) => s.#parts.core.cancel(options),
      read: (s) => s.#parts.core.read(),
      subscribe: (s, afterStepIndex, opening) => s.#parts.core.subscribe(afterStepIndex, opening),
      admitCall: (s, attempt) => s.#parts.gateway.admitCall(attempt),
      gatewayCall: (s, path, body, meta) => s.#parts.calls.call(path, body, meta),
      interruptCalls: (s, replacedVersion, inFlightSince) =>
        s.#parts.calls.interruptForSync(replacedVersion, inFlightSince),
      staleCheck: (s, policyVersion, inFlightSince) =>
        s.#parts.calls.staleness.check(policyVersion, inFlightSince),
      remoteCallInterrupt: (s, callId, interrupt, legVersion) =>
        s.#parts.calls.remoteInterrupt(callId, interrupt, legVersion),
      callerLeft: (s, callId) => s.#parts.calls.callers.left(callId),
      claim: (s, runnerId, leaseMs) => s.#parts.core.claims.claim(runnerId, leaseMs),
      heartbeat: (s, attempt, runnerId, leaseMs) =>
        s.#parts.core.claims.heartbeat(attempt, runnerId, leaseMs),
      finishAttempt: (s, attempt, runnerId, input) =>
        s.#parts.core.claims.finishAttempt(attempt, runnerId, input),
      releaseAttempt: (s, attempt, runnerId, reason, error) =>
        s.#parts.core.claims.releaseAttempt(attempt, runnerId, reason, error),
      recordCall: (s, call) => s.#parts.gateway.recordCall(call),
      amendCallVersion: (s, callId, versionEnd) =>
        s.#parts.gateway.amendCallVersion(callId, versionEnd),
      addEvents: (s, events) => s.#parts.gateway.addEvents(events),
      finishExternal: (s, input) => s.#parts.gateway.finishExternal(input),
      endForLimit: (s, reason, message) => s.#parts.gateway.endForLimit(reason, message),
    });
  }

  /**
   * The requests this object served (RPC methods and alarms; this one not counted) and the SQLite
   * statements and rows it ran, since it started (in memory, so an evicted object starts again
   * at 0): what a rollout costs in Durable Object units. Null when no rollout is stored here.
   */
  usageCounts(): { requests: RequestCounts; sqlite: SqlCounts } | null {
    return this.#parts.kernel.spec === undefined
      ? null
      : { requests: this.#requests.read(), sqlite: this.#parts.sql.read() };
  }

  /** The results consumer's answer to this rollout's delivery check: confirmed, or the result is sent again. */
  async deliveryChecked(held: boolean): Promise<void> {
    this.#requests.count("deliveryChecked");
    // A re-send runs on after the answer: the consumer must not wait on its own queue.
    const { resending } = await onDeliveryChecked(this.#parts.kernel, held);
    if (resending !== undefined) this.ctx.waitUntil(resending);
  }

  /** Deletes the rollout's storage and alarm, then wires fresh parts over the empty storage (nothing cached survives). */
  async purge(): Promise<void> {
    this.#requests.count("purge");
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.#parts = sessionParts(this.ctx, this.env);
  }

  /** The watchdog. */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    // A restarted object runs on the calls its restart cut before anything else (session-calls.ts).
    this.#parts.calls.resumeCut();
    await this.#parts.core.onAlarm();
    await this.#parts.calls.afterAlarm();
  }
}
