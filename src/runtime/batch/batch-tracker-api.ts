/** @module What a BatchTracker object offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type { BatchProgress } from "../../schemas/batch";
import type { BatchSummary, EvalRow, RolloutListPage } from "../../schemas/batch-listing";
import type { BatchRunners } from "../../schemas/batch-runners";
import type { BatchStepStats } from "../../schemas/run-view";
import type { RequestCounts } from "../request-counter";
import type { CancelResult, ResultAck, SubmitResult } from "./batch-results";
import type { StoredVerdict } from "./batch-storage";

/** One batch's tracker (one per batch id): its rows, fan-out, progress, runners and cancel. */
export interface BatchTrackerApi {
  /** Starts the batch described by a BatchMessage (validated by the object: RPC callers are not trusted); idempotent. */
  submit(message: unknown): Promise<SubmitResult>;
  /** Records a consumer batch's finished rollouts of this batch (one request for all), each as `onResult`. */
  onResults(messages: unknown[]): Promise<ResultAck[]>;
  /** Records one finished rollout (a ResultMessage) and releases the next. */
  onResult(message: unknown): Promise<ResultAck>;
  /** Stops the batch: cancels released rollouts still running; unreleased ones are never created. */
  cancel(): Promise<CancelResult>;
  /**
   * The trainer feed dropped one of this batch's groups (a GroupDropNotice: uid, reason, the
   * pull's policy version): a `stale` drop is refilled from the reserve rows. Whether it counted.
   */
  groupDropped(notice: unknown): Promise<boolean>;
  /** Counts by status and termination reason, reward mean, done flag. */
  progress(): BatchProgress | undefined;
  /** One page of the batch's rollouts (a RolloutListQuery: paging and filters). */
  rollouts(
    query: unknown,
  ): RolloutListPage | { invalid: Array<{ path: string; message: string }> } | undefined;
  /** Reward distribution and means by data source and agent. */
  summary(): BatchSummary | undefined;
  /** The run view's numbers of this batch (one training step). */
  stepStats(): BatchStepStats | undefined;
  /** Keeps the trainer's report of this batch (a TrainerReport, validated by the object); undefined if never submitted. */
  reportTrainer(
    report: unknown,
  ): { ok: true } | { invalid: Array<{ path: string; message: string }> } | undefined;
  /** What became of one group of this batch (null: not complete yet). */
  groupVerdict(rowIndex: number): { verdict: StoredVerdict; decided_at: number } | null | undefined;
  /** Per-row pass counts for pass@k and the failures by termination reason. */
  evaluation(
    passThreshold: number,
  ): { rows: EvalRow[]; failures: Record<string, number> } | undefined;
  /** Counts what a runner did with one attempt of this batch (reported by the rollout's session). */
  runnerEvent(event: unknown): void;
  /** A heartbeat of a runner holding leases of this batch: the attempts it holds count as claimed once each. */
  runnerSeen(
    runnerId: string,
    leaseMs: number,
    attempts?: ReadonlyArray<{ rollout_id: string; attempt: number }>,
  ): void;
  /** The runners working on this batch: claimed, heartbeating, lost. */
  runners(): BatchRunners;
  /** Requests this object served since it started, by method (benches count requests per rollout with it). */
  requestCounts(): RequestCounts;
}

/** Every method of BatchTrackerApi, at run time. */
export const BATCH_TRACKER_METHODS = methodNames<BatchTrackerApi>({
  submit: true,
  onResults: true,
  onResult: true,
  cancel: true,
  groupDropped: true,
  progress: true,
  rollouts: true,
  summary: true,
  stepStats: true,
  reportTrainer: true,
  groupVerdict: true,
  evaluation: true,
  runnerEvent: true,
  runnerSeen: true,
  runners: true,
  requestCounts: true,
});
