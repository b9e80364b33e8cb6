/** @module One batch of rollouts: its rows, fan-out, progress and cancel, as typed RPC methods over BatchCore. */
import { RequestCounter, type RequestCounts } from "../src/runtime/request-counter";
import { DurableObject } from "cloudflare:workers";
import type { BatchProgress } from "../src/schemas/batch";
import type { BatchSummary, EvalRow, RolloutListPage } from "../src/schemas/batch-listing";
import { EXTERNAL_AGENT, isExternalAgent } from "../src/schemas/rollout-api";
import { agentRegistry } from "../src/sdk/agent-registry";
import { BatchCore } from "../src/runtime/batch/batch-core";
import { BatchRunnersStore } from "../src/runtime/batch/batch-runners";
import type { BatchRunners } from "../src/schemas/batch-runners";
import type { BatchStepStats } from "../src/schemas/run-view";
import type { StoredVerdict } from "../src/runtime/batch/batch-storage";
import type { RolloutSessionsPort } from "../src/runtime/batch/batch-ports";
import type { CancelResult, ResultAck, SubmitResult } from "../src/runtime/batch/batch-results";
import type { BatchTrackerApi } from "../src/runtime/batch/batch-tracker-api";
import { objects, type ObjectDirectory } from "../src/runtime/objects/object-directory";
import { memberSignal } from "../src/training/member-signal";
import { r2Blobs } from "../src/sink/publication/r2-blobs";

function sessions(directory: ObjectDirectory): RolloutSessionsPort {
  const stub = directory.session;
  return {
    create: (spec) => stub(spec.rollout_id).create(spec),
    cancel: (rolloutId) => stub(rolloutId).cancel(),
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
    });
  }

  /** Starts the batch described by a BatchMessage (validated here: RPC callers are not trusted); idempotent. */
  submit(message: unknown): Promise<SubmitResult> {
    this.#requests.count("submit");
    return this.#core.submit(message);
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

  /** Stops the batch: cancels released rollouts still running; unreleased ones are never created. */
  cancel(): Promise<CancelResult> {
    this.#requests.count("cancel");
    return this.#core.cancel();
  }

  /** Counts by status and termination reason, reward mean, done flag. */
  progress(): BatchProgress | undefined {
    this.#requests.count("progress");
    return this.#core.progress();
  }

  /** One page of the batch's rollouts (a RolloutListQuery: paging and filters). */
  rollouts(
    query: unknown,
  ): RolloutListPage | { invalid: Array<{ path: string; message: string }> } | undefined {
    this.#requests.count("rollouts");
    return this.#core.rollouts(query);
  }

  /** Reward distribution and means by data source and agent. */
  summary(): BatchSummary | undefined {
    this.#requests.count("summary");
    return this.#core.summary();
  }

  /** The run view's numbers of this batch (one training step). */
  stepStats(): BatchStepStats | undefined {
    this.#requests.count("stepStats");
    return this.#core.stepStats();
  }

  /** Keeps the trainer's report of this batch (validated by the core); undefined if never submitted. */
  reportTrainer(
    report: unknown,
  ): { ok: true } | { invalid: Array<{ path: string; message: string }> } | undefined {
    this.#requests.count("reportTrainer");
    return this.#core.reportTrainer(report);
  }

  /** What became of one group of this batch (null: not complete yet). */
  groupVerdict(
    rowIndex: number,
  ): { verdict: StoredVerdict; decided_at: number } | null | undefined {
    this.#requests.count("groupVerdict");
    return this.#core.groupVerdict(Number(rowIndex));
  }

  /** Per-row pass counts for pass@k and the failures by termination reason. */
  evaluation(
    passThreshold: number,
  ): { rows: EvalRow[]; failures: Record<string, number> } | undefined {
    this.#requests.count("evaluation");
    return this.#core.evaluation(passThreshold);
  }

  /** Counts what a runner did with one attempt of this batch (reported by the rollout's session). */
  runnerEvent(event: unknown): void {
    this.#requests.count("runnerEvent");
    this.#runners.record(event);
  }

  /** A heartbeat of a runner holding leases of this batch: the attempts it holds count as claimed once each. */
  runnerSeen(
    runnerId: string,
    leaseMs: number,
    attempts: ReadonlyArray<{ rollout_id: string; attempt: number }> = [],
  ): void {
    this.#requests.count("runnerSeen");
    this.#runners.heartbeat(runnerId, leaseMs, attempts);
  }

  /** The runners working on this batch: claimed, heartbeating, lost. */
  runners(): BatchRunners {
    this.#requests.count("runners");
    return this.#runners.view();
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
