/**
 * @module What one RolloutSession object is made of: one kernel over the platform's ports (its
 * storage, queues, R2, the other objects, the drive route) and the concerns over that kernel, which
 * serve the object's RPC methods (durable-objects/rollout-session.ts).
 */
import { objects, type ObjectBindings } from "../objects/object-directory";
import { gatewayFor, servingPort, type GatewayBindings } from "../gateway-deps";
import { claimShardOf } from "../object-names";
import { CountingSql } from "../sql-counter";
import type { DriveTrigger } from "../../ports";
import type { DeliveryCheckMessage } from "../../schemas/delivery-check-message";
import { r2Blobs } from "../../sink/publication/r2-blobs";
import { RolloutSessionCore, SessionAttemptOps } from "./lifecycle";
import { SessionCalls, SessionGatewayOps } from "./calls";
import { SessionForkOps } from "./fork";
import { SessionKernel } from "./kernel";

/** The bindings a session is wired from (the Worker's `Env` satisfies them). */
export type SessionBindings = ObjectBindings &
  GatewayBindings & {
    TRAJECTORIES: R2Bucket;
    ROLLOUT_WORK: Queue;
    ROLLOUT_RESULTS: Queue;
    /** The Worker's own drive route (a service binding); absent, the alarm re-announces to the queue. */
    DRIVER?: Pick<Fetcher, "fetch">;
  };

/** One kernel, its SQLite cursor's counts, and the concerns that serve the object's methods. */
export interface SessionParts {
  /** The object's SQLite, counting statements and rows (what `usageCounts` reports). */
  sql: CountingSql;
  kernel: SessionKernel;
  /** The driver-facing lifecycle: create, lease, commit, finish, claims, the watchdog. */
  core: RolloutSessionCore;
  /** The gateway's records: calls, spans, external finishes. */
  gateway: SessionGatewayOps;
  attempts: SessionAttemptOps;
  fork: SessionForkOps;
  /** The gateway calls running here: their callers, their flights, and the calls a restart cut. */
  calls: SessionCalls;
}

/**
 * Calls the Worker's own drive route for one rollout through the `DRIVER` service binding: a
 * separate invocation with its own 6 connections, whose CPU counts toward this alarm's budget
 * (Workers reached through a service binding share the CPU of the top-level request).
 */
function driveTrigger(env: SessionBindings): DriveTrigger | undefined {
  const driver = env.DRIVER;
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

/** The parts of the session object whose state is `ctx`, wired to `env`'s bindings. */
export function sessionParts(ctx: DurableObjectState, env: SessionBindings): SessionParts {
  const storage = ctx.storage;
  const others = objects(env);
  const sql = new CountingSql(storage.sql);
  // Made after the kernel, which it needs; the kernel's alarm wrappers read it only when called.
  let calls!: SessionCalls;
  const kernel = new SessionKernel({
    storage: {
      sql,
      transactionSync: (fn) => storage.transactionSync(fn),
      // While gateway calls run, the alarm stays within their flight check (session-calls.ts).
      setAlarm: (time) => storage.setAlarm(calls.alarmTime(time)),
      deleteAlarm: () =>
        calls.inFlight
          ? storage.setAlarm(calls.alarmTime(Number.MAX_SAFE_INTEGER))
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
        await others.claims(runnerAgent, claimShardOf(rolloutId)).offer(rolloutId);
      },
    },
    runnerEvents: {
      report: async (batchId, event) => {
        await others.batch(batchId).runnerEvent(event);
      },
    },
    drive: driveTrigger(env),
    releaseAdmissions: async (rolloutId) => {
      // An online session's calls were never counted at a shard (servingPort).
      if (kernel.spec?.online) return;
      await others.shard(rolloutId).releaseRollout(rolloutId);
    },
  });
  // One kernel, four parts: the driver-facing lifecycle, the gateway's calls, the attempts, forks.
  const core = new RolloutSessionCore(kernel);
  const gateway = new SessionGatewayOps(kernel);
  const attempts = new SessionAttemptOps(kernel);
  const fork = new SessionForkOps(kernel);
  calls = new SessionCalls(kernel, gateway, {
    rolloutId: () => kernel.spec?.rollout_id,
    // An online session is served by its assigned version's pool, outside the training fence.
    gateway: () => {
      const online = kernel.spec?.online;
      return online ? gatewayFor(env, servingPort(online)) : gatewayFor(env);
    },
    keepAlive: (work) => ctx.waitUntil(work),
    getAlarm: () => storage.getAlarm(),
    setAlarm: (time) => storage.setAlarm(time),
    now: () => Date.now(),
  });
  return { sql, kernel, core, gateway, attempts, fork, calls };
}
