/**
 * @module A session's gateway calls: run here, where they outlive the HTTP request that asked
 * (gateway-call-owner.ts), kept in the session's flights while they run (call-flights.ts), run on
 * after the object restarts (call-resume.ts), and found again by a caller that comes back
 * (reattach.ts). While any call is in flight the object's alarm is kept within
 * `FLIGHT_CHECK_MS`: a restarted object runs only when called or when its alarm fires, and a
 * cut call whose caller never comes back must still be run on and recorded.
 */
import { ConflictError } from "../../../errors";
import type { Gateway } from "../../../gateway/gateway";
import type { UpstreamPath } from "../../../gateway/model-backend";
import { chatCompletionOf, chatStreamOf } from "../../../gateway/openai-chat";
import { DEFAULT_PROGRESS_CADENCE } from "../../../gateway/stream-progress";
import { toWireError } from "../../../gateway/wire-errors";
import type { JsonObject } from "../../../schemas/json";
import { CallFlights } from "./call-flights";
import { requestKey, resumeCutCalls } from "./call-resume";
import { CallerRegistry, type CallOwnerDeps, ownGatewayCall } from "./gateway-call-owner";
import { ReattachableCalls } from "./reattach";
import type { GatewayCallMeta, GatewayCallResult } from "./gateway-call";
import type { SessionGatewayOps } from "./session-gateway";
import type { SessionKernel } from "../kernel";
import { SessionStaleness } from "./session-staleness";

/**
 * How soon after a restart a cut call whose caller does not come back is run on: the alarm is kept
 * this close while calls are in flight (an alarm invocation per 10 s per rollout with a call
 * running, against minutes of generation).
 */
export const FLIGHT_CHECK_MS = 10_000;

/** What the calls need of their object. */
export interface SessionCallsDeps {
  rolloutId(): string | undefined;
  gateway(): Gateway;
  keepAlive(work: Promise<unknown>): void;
  getAlarm(): Promise<number | null>;
  setAlarm(time: number): Promise<void>;
  now(): number;
}

/** The gateway calls of one session. */
export class SessionCalls {
  /** Callers of the streamed calls running here, told when they leave; interrupts for weight syncs. */
  readonly callers = new CallerRegistry();
  /** The staleness rule while the rollout runs: checked at each call's admission and when a weight sync reaches the session. */
  readonly staleness: SessionStaleness;
  readonly #kernel: SessionKernel;
  readonly #ops: SessionGatewayOps;
  readonly #deps: SessionCallsDeps;
  readonly #flights: CallFlights;
  /** The calls this object life runs (begun, not ended). */
  readonly #running = new Set<string>();
  readonly #reattach: ReattachableCalls;
  /** Whether this object life looked for calls its restart cut (once: later flights are its own). */
  #lookedForCut = false;

  constructor(kernel: SessionKernel, ops: SessionGatewayOps, deps: SessionCallsDeps) {
    this.#kernel = kernel;
    this.#ops = ops;
    this.#deps = deps;
    this.#flights = new CallFlights(kernel.deps.storage.sql);
    this.#reattach = new ReattachableCalls(deps.now);
    this.staleness = new SessionStaleness(kernel, () => this.callers.stopAll());
  }

  /**
   * Registers the interrupt of a call the rollout's driver runs (`CallerRegistry.setRemoteInterrupt`);
   * its leg's version is a version the rollout's tokens come from, for the staleness rule.
   */
  remoteInterrupt(callId: string, interrupt: (() => void) | null, legVersion?: number): void {
    if (interrupt !== null && legVersion !== undefined) this.staleness.noteAdmitted(legVersion);
    this.callers.setRemoteInterrupt(callId, interrupt, legVersion);
  }

  /**
   * An `interrupt` weight sync replacing `replacedVersion` reached the session: a rollout that the
   * version after it (at least `replacedVersion + 1`) makes stale ends STALE and its calls stop;
   * otherwise its calls are cut, to resume under the new version. `inFlightSince`: the oldest
   * version its calls in flight were admitted under. Returns the calls cut.
   */
  interruptForSync(replacedVersion?: number, inFlightSince?: number): number {
    if (replacedVersion !== undefined && this.staleness.check(replacedVersion + 1, inFlightSince))
      return 0;
    return this.callers.interruptAll(replacedVersion);
  }

  /** Runs one call of the rollout's gateway endpoint here, or attaches its caller to the call it asked before. */
  async call(
    path: UpstreamPath,
    body: JsonObject & { stream?: boolean },
    meta: GatewayCallMeta & { rolloutId: string },
  ): Promise<GatewayCallResult> {
    this.resumeCut();
    const named = meta.clientCallId === true ? meta.callId : null;
    // The request's key is its whole body as text: made only when an answer is held to match it against.
    const attached = this.#reattach.holding
      ? this.#reattach.claim(named, requestKey(path, body))
      : undefined;
    if (attached !== undefined) return attached;
    if (named !== null) {
      const again = this.#again(named, path, body);
      if (again) return again;
    }
    if (this.#running.size === 0) await this.#keepAlarm();
    return ownGatewayCall(this.callers, this.#ownerDeps(meta.rolloutId), path, body, meta);
  }

  /** Runs on the calls this object's restart cut, once per object life (a call or the alarm comes first). */
  resumeCut(): void {
    if (this.#lookedForCut) return;
    this.#lookedForCut = true;
    const rolloutId = this.#deps.rolloutId();
    if (rolloutId === undefined) return;
    const resumed = resumeCutCalls({
      flights: this.#flights,
      running: this.#running,
      recorded: (callId) => this.#kernel.store.hasCall(callId),
      run: (flight, resumption) =>
        ownGatewayCall(
          this.callers,
          this.#ownerDeps(rolloutId),
          flight.request.path,
          flight.request.body,
          flight.request.meta,
          resumption,
        ),
      reattach: this.#reattach,
      keepAlive: this.#deps.keepAlive,
      cadence: DEFAULT_PROGRESS_CADENCE,
    });
    if (resumed > 0) this.#deps.keepAlive(this.#keepAlarm());
  }

  /** After the alarm's own work: while calls run, the next alarm comes within `FLIGHT_CHECK_MS`. */
  async afterAlarm(): Promise<void> {
    if (this.#running.size > 0) await this.#keepAlarm();
  }

  /** The time an alarm asked for at `time` is set to: no later than the next flight check while calls run. */
  alarmTime(time: number): number {
    return this.#running.size > 0 ? Math.min(time, this.#deps.now() + FLIGHT_CHECK_MS) : time;
  }

  /** Whether calls run here (a deleted alarm is then set for the flight check instead). */
  get inFlight(): boolean {
    return this.#running.size > 0;
  }

  async #keepAlarm(): Promise<void> {
    const at = this.#deps.now() + FLIGHT_CHECK_MS;
    const current = await this.#deps.getAlarm();
    if (current === null || current > at) await this.#deps.setAlarm(at);
  }

  /** A named call asked again: conflict while it runs, its recorded answer once it ended. */
  #again(
    callId: string,
    path: UpstreamPath,
    body: JsonObject & { stream?: boolean },
  ): GatewayCallResult | undefined {
    if (this.#running.has(callId))
      return {
        ok: false,
        error: toWireError(
          new ConflictError(`call ${callId} is still running; its answer goes to its first caller`),
        ),
      };
    if (!this.#kernel.store.hasCall(callId)) return undefined;
    const call = this.#kernel.store.listCalls().find((stored) => stored.call_id === callId)!;
    if (path !== "/chat/completions")
      return {
        ok: false,
        error: toWireError(new ConflictError(`call ${callId} was already made and recorded`)),
      };
    if (body.stream !== true)
      return { ok: true, json: JSON.stringify(chatCompletionOf(call, { full: true })) };
    const bytes = new TextEncoder().encode(chatStreamOf(call));
    return {
      ok: true,
      stream: new ReadableStream({
        start: (controller) => {
          controller.enqueue(bytes);
          controller.close();
        },
      }),
    };
  }

  #ownerDeps(rolloutId: string): CallOwnerDeps {
    const running = this.#running;
    const flights = this.#flights;
    const now = this.#deps.now;
    return {
      rolloutId,
      gateway: this.#deps.gateway(),
      admitCall: (attempt, resumed) => this.#ops.admitCall(attempt, resumed),
      recordCall: (call) => this.#ops.recordCall(call),
      amendCallVersion: (callId, versionEnd) => this.#ops.amendCallVersion(callId, versionEnd),
      endForLimit: (reason, message) => this.#ops.endForLimit(reason, message),
      admitVersion: (version) => this.staleness.admit(version),
      previousTurn: (attempt) => this.#ops.previousTurn(attempt),
      keepAlive: this.#deps.keepAlive,
      flights: {
        begin(callId, request) {
          running.add(callId);
          flights.begin(callId, request, now());
        },
        keep: (callId, batch) => flights.keep(callId, batch),
        abandon: (callId) => flights.abandon(callId),
        end(callId) {
          // Ended by its record, then again once its work settled: the second end writes nothing.
          if (running.delete(callId)) flights.end(callId);
        },
      },
    };
  }
}
