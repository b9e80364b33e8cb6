/** @module One batch of rollouts: its rows, fan-out, progress and cancel, as typed RPC methods over BatchCore. */
import { RequestCounter, type RequestCounts } from "../src/runtime";
import { DurableObject } from "cloudflare:workers";
import { EXTERNAL_AGENT, isExternalAgent } from "../src/schemas/rollout-api";
import { agentRegistry } from "../src/sdk";
import {
  BatchCore,
  BatchRunnersStore,
  type BatchTrackerApi,
  type ResultAck,
  type RolloutSessionsPort,
} from "../src/runtime/batch";
import { installSurface, objects, type ObjectDirectory } from "../src/runtime/objects";
import { memberSignal } from "../src/training";
import { r2Blobs } from "../src/sink/publication";

function sessions(directory: ObjectDirectory): RolloutSessionsPort {
  const stub = directory.session;
  return {
    create: (spec) => stub(spec.rollout_id).create(spec),
    cancel: (rolloutId, options) => stub(rolloutId).cancel(options),
    forkSource: (parentId, atStep) => stub(parentId).forkSource(atStep),
    createFork: (spec, prefix) => stub(spec.rollout_id).createFork(spec, prefix),
    async outcome(rolloutId) {
      const view = await stub(rolloutId).read();
      if (!view) return undefined;
      // Everything its result message would have said, so a lost message changes nothing.
      const signal = view.group ? memberSignal(view, view.group) : null;
      return {
        status: view.status,
        termination_reason: view.termination_reason,
        reward: view.reward,
        ...(signal
          ? { outcome: signal.outcome, metric: signal.metric, superseded: signal.superseded }
          : {}),
      };
    },
  };
}

/** The methods installed from the table below; the class writes out the rest of BatchTrackerApi. */
type Installed = Omit<BatchTrackerApi, "onResults" | "onResult" | "requestCounts">;

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface BatchTracker extends Installed {}

/**
 * A batch's rows and the state of each of its rollouts (`<batch_id>:<row>:<sample>`). One
 * instance per batch id (src/runtime/objects/object-directory.ts); the alarm resumes a fan-out that an
 * eviction or crash interrupted.
 */
export class BatchTracker extends DurableObject<Env> implements BatchTrackerApi {
  readonly #core: BatchCore;
  readonly #runners: BatchRunnersStore;

  readonly #requests = new RequestCounter();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    this.#runners = new BatchRunnersStore(storage.sql, () => Date.now());
    this.#core = new BatchCore({
      storage: {
        sql: storage.sql,
        transactionSync: (fn) => storage.transactionSync(fn),
        setAlarm: (time) => storage.setAlarm(time),
      },
      sessions: sessions(objects(env)),
      results: { send: async (message) => void (await env.ROLLOUT_RESULTS.send(message)) },
      blobs: r2Blobs(env.TRAJECTORIES),
      agents: {
        has: (name) => isExternalAgent(name) || agentRegistry.get(name) !== undefined,
        names: () => [EXTERNAL_AGENT, ...agentRegistry.names()],
        maxConcurrent: (name) => {
          const agent = agentRegistry.get(name);
          return agent?.kind === "workflow" ? agent.maxConcurrent : null;
        },
        rewardDimensions: (name) => agentRegistry.get(name)?.rewardDimensions ?? [],
        definition: (name) => (isExternalAgent(name) ? undefined : agentRegistry.get(name)),
      },
      now: () => Date.now(),
      // An `on_stale: "wait"` batch holds until the feed holds none of its groups ready (stale-groups.ts).
      feed: {
        readyGroups: async (batchId) =>
          (await objects(env).feed().stats({ batch_id: batchId })).by_batch[batchId]
            ?.ready_groups ?? 0,
      },
      pressure: {
        share: (batchId, maxConcurrent, live) =>
          objects(env).policy().pressureShare(batchId, maxConcurrent, live),
      },
    });
  }

  static {
    installSurface<BatchTracker, Installed>(BatchTracker, (s) => s.#requests, {
      submit: (s, message) => s.#core.submit(message),
      cancel: (s) => s.#core.cancel(),
      groupDropped: (s, notice) => s.#core.groupDropped(notice),
      progress: (s) => s.#core.progress(),
      rollouts: (s, query) => s.#core.rollouts(query),
      summary: (s) => s.#core.summary(),
      stepStats: (s) => s.#core.stepStats(),
      reportTrainer: (s, report) => s.#core.reportTrainer(report),
      groupVerdict: (s, rowIndex) => s.#core.groupVerdict(Number(rowIndex)),
      evaluation: (s, passThreshold) => s.#core.evaluation(passThreshold),
      runnerEvent: (s, event) => s.#runners.record(event),
      runnerSeen: (s, runnerId, leaseMs, attempts = []) =>
        s.#runners.heartbeat(runnerId, leaseMs, attempts),
      runners: (s) => s.#runners.view(),
    });
  }

  /** Records a consumer batch's finished rollouts of this batch (one request for all), each as `onResult`. */
  async onResults(messages: unknown[]): Promise<ResultAck[]> {
    this.#requests.count("onResults");
    const acks: ResultAck[] = [];
    for (const message of messages) {
      acks.push(await this.#core.onResult(message));
      this.#runners.resultFinished(message);
    }
    return acks;
  }

  /** Records one finished rollout (a ResultMessage) and releases the next. */
  onResult(message: unknown): Promise<ResultAck> {
    this.#requests.count("onResult");
    this.#runners.resultFinished(message);
    return this.#core.onResult(message);
  }

  /** Requests this object served since it started, by method (benches count requests per rollout with it). */
  requestCounts(): RequestCounts {
    return this.#requests.read();
  }

  /** Resumes fan-out, checks on live rollouts, reads back lost results. */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    await this.#core.tick();
  }
}
