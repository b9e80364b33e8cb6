/** @module The logic of a batch tracker: submit, fan-out as results arrive, progress, cancel, the alarm. */
import type { BlobStorePort, Clock, ResultsQueuePort, StoragePort } from "../../ports";
import { slotOfStandIn } from "./taken-slot";
import { BatchMessage, MAX_MAX_CONCURRENT, type BatchProgress } from "../../schemas/batch";
import {
  RolloutListQuery,
  type BatchSummary,
  type EvalRow,
  type RolloutListPage,
} from "../../schemas/batch-listing";
import { ResultMessage, resultOutcome } from "../../schemas/result-message";
import { BatchSignal } from "./batch-signal";
import { treeNodes } from "../../schemas/batch-tree";
import { rootSlots } from "./tree-slots";
import { TERMINAL_STATUSES } from "../../schemas/termination";
import {
  effectiveMaxConcurrent,
  fingerprintBatch,
  prepareTasks,
  resolveSettings,
} from "./batch-input";
import type { AgentCatalog, RolloutSessionsPort } from "./batch-ports";
import { buildProgress } from "./batch-progress";
import type { CancelResult, ResultAck, SubmitResult } from "./batch-results";
import { BATCH_RECORD_SCHEMA_VERSION, type BatchRecord } from "./batch-state";
import { evalRows, failureReasons, listSlots, rewardBy, rewardHistogram } from "./batch-listing";
import { BatchStorage } from "./batch-storage";
import { FanOut } from "./fan-out";
import { generatedBy, stepStats, writeTrainerReport } from "./batch-step-stats";
import { type BatchStepStats, TrainerReport } from "../../schemas/run-view";
import type { StoredVerdict } from "./batch-storage";
import { BatchPressure, type PressurePort } from "./pressure-requeue";
import { StaleRefill } from "./stale-refill";
import { StaleGroups, type FeedBacklogPort } from "./stale-groups";

/** How often the alarm checks on a running batch (re-creates, status checks, read-backs, release). */
export const TICK_MS = 5_000;
/** A rollout whose session ended this long ago without a result message is read back from the session. */
export const RESULT_GRACE_MS = 30_000;
/** Live rollouts whose status one alarm asks their sessions about. */
export const CHECK_PER_TICK = 64;

/** What the batch logic needs from its Durable Object. */
export interface BatchDeps {
  storage: StoragePort;
  sessions: RolloutSessionsPort;
  /** ROLLOUT_RESULTS: stand-in results for slots whose rollout id another rollout holds. */
  results: ResultsQueuePort;
  /** Where `dataset_key` objects are read from (the TRAJECTORIES bucket). */
  blobs: BlobStorePort;
  agents: AgentCatalog;
  now: Clock;
  /** The policy object's KV-pressure control (src/runtime/pressure); absent: `max_concurrent` alone. */
  pressure?: PressurePort;
  /** The trainer feed's ready groups of a batch: when an `on_stale: "wait"` batch stops holding; absent: it never holds. */
  feed?: FeedBacklogPort;
}

/**
 * One batch: its rows, the rollouts released so far and their outcomes. The Durable Object makes
 * each method single-writer; fan-out reserves slots before any await, so interleaved calls never
 * exceed `max_concurrent`. Everything is read from SQLite on each call, never cached.
 */
export class BatchCore {
  readonly #deps: BatchDeps;
  readonly #storage: BatchStorage;
  readonly #fanOut: FanOut;
  readonly #signal: BatchSignal;
  readonly #pressure: BatchPressure | null;
  readonly #refill: StaleRefill;
  readonly #stale: StaleGroups;

  constructor(deps: BatchDeps) {
    this.#deps = deps;
    this.#storage = new BatchStorage(deps.storage.sql);
    this.#storage.migrate();
    this.#refill = new StaleRefill({
      sql: deps.storage.sql,
      storage: this.#storage,
      transactionSync: (fn) => deps.storage.transactionSync(fn),
      now: deps.now,
    });
    this.#pressure = deps.pressure
      ? new BatchPressure({
          sql: deps.storage.sql,
          storage: this.#storage,
          transactionSync: (fn) => deps.storage.transactionSync(fn),
          sessions: deps.sessions,
          policy: deps.pressure,
          now: deps.now,
        })
      : null;
    this.#fanOut = new FanOut({
      storage: this.#storage,
      transactionSync: (fn) => deps.storage.transactionSync(fn),
      sessions: deps.sessions,
      results: deps.results,
      definition: (name) => deps.agents.definition(name),
      now: deps.now,
      ...(this.#pressure ? { pressure: this.#pressure } : {}),
      held: () => this.#refill.holdingSince() !== null,
    });
    this.#signal = new BatchSignal({
      storage: this.#storage,
      transactionSync: (fn) => deps.storage.transactionSync(fn),
      fanOut: this.#fanOut,
      now: deps.now,
      targetMet: (record) => this.#refill.targetMet(record),
      judged: (row, verdict) => this.#stale.judged(row, verdict),
    });
    this.#stale = new StaleGroups({
      storage: this.#storage,
      refill: this.#refill,
      fanOut: this.#fanOut,
      signal: this.#signal,
      rearm: async () => void (await deps.storage.setAlarm(deps.now() + TICK_MS)),
      ...(deps.feed ? { feed: deps.feed } : {}),
      now: deps.now,
    });
  }

  /** The answer for a batch that exists: the same message is a no-op, another one a conflict. */
  #existing(fingerprint: string): SubmitResult | undefined {
    const record = this.#storage.readBatch();
    if (!record) return undefined;
    const progress = this.#progressOf(record);
    if (record.fingerprint === fingerprint) return { ok: true, created: false, progress };
    return {
      ok: false,
      reason: "conflict",
      message: `batch ${record.batch_id} already exists with different content`,
      progress,
    };
  }

  /**
   * Stores a batch and releases its first chunk. Idempotent by batch id: the same message again
   * answers the current progress and creates nothing; a different one is a conflict. Invalid
   * input (fields, rows, an unreadable dataset) is returned with each problem's path.
   */
  async submit(input: unknown): Promise<SubmitResult> {
    const parsed = BatchMessage.safeParse(input);
    if (!parsed.success) {
      return {
        ok: false,
        reason: "invalid",
        errors: parsed.error.issues.map((issue) => ({
          path: issue.path.map(String).join(".") || "(body)",
          message: issue.message,
        })),
      };
    }
    const message = parsed.data;
    const fingerprint = await fingerprintBatch(message);
    const known = this.#existing(fingerprint);
    if (known) return known;
    const prepared = await prepareTasks(message, this.#deps.blobs, this.#deps.agents);
    if (!prepared.ok) return { ok: false, reason: "invalid", errors: prepared.errors };
    // Another submit of this batch may have finished while the dataset was read.
    const raced = this.#existing(fingerprint);
    if (raced) return raced;
    const now = this.#deps.now();
    const settings = resolveSettings(message);
    const record: BatchRecord = {
      schema_version: BATCH_RECORD_SCHEMA_VERSION,
      batch_id: message.batch_id,
      fingerprint,
      agent: message.agent,
      mode: message.mode,
      n: message.n,
      config: settings.config,
      training_mode: message.training_mode,
      data_manager: settings.data_manager,
      max_concurrent: effectiveMaxConcurrent(message, prepared.tasks, this.#deps.agents),
      dataset_key: message.dataset_key ?? null,
      rows: prepared.tasks.length,
      total: prepared.tasks.length * message.n * treeNodes(message.tree),
      tree: message.tree ?? null,
      next_index: 0,
      cancelled_at: null,
      max_member_retries: message.max_member_retries,
      target_groups: message.target_groups ?? null,
      filter: message.filter ?? null,
      on_infra_failure: message.on_infra_failure,
      cut_at: null,
      on_stale: message.on_stale,
      refill_budget: message.refill_budget,
      created_at: now,
      updated_at: now,
      finished_at: null,
    };
    this.#deps.storage.transactionSync(() => {
      this.#storage.insertRows(prepared.tasks);
      this.#storage.writeBatch(record);
    });
    // The alarm is armed before the first create, so a crash mid-fan-out resumes from it.
    await this.#deps.storage.setAlarm(now + TICK_MS);
    await this.#fanOut.release();
    return { ok: true, created: true, progress: this.#progressOf(this.#storage.readBatch()!) };
  }

  /** Records a finished rollout (deduped by rollout id) and releases the next rollout into its slot. */
  async onResult(input: unknown): Promise<ResultAck> {
    const parsed = ResultMessage.safeParse(input);
    if (!parsed.success) return { ok: false, reason: "invalid", message: "not a result message" };
    const message = parsed.data;
    const record = this.#storage.readBatch();
    if (!record)
      return {
        ok: false,
        reason: "not_found",
        message: `batch ${message.batch_id} does not exist`,
      };
    if (message.batch_id !== record.batch_id || !TERMINAL_STATUSES.has(message.status)) {
      return {
        ok: false,
        reason: "invalid",
        message: `result for batch ${message.batch_id} with status ${message.status} does not belong here`,
      };
    }
    const outcome = {
      status: message.status,
      termination_reason: message.termination_reason,
      reward: message.reward,
      outcome: resultOutcome(message),
      metric: message.metric,
      superseded: message.superseded,
      ...generatedBy(message),
    };
    if (!this.#storage.recordOutcome(message.rollout_id, outcome, this.#deps.now())) {
      if (this.#storage.hasRollout(message.rollout_id)) {
        // Its end was read back from its session (or recorded by a cancel) before this message came:
        // act on what only the message says, and judge its group (idempotent) if that is all it lacked.
        const slot = this.#storage.slotOf(message.rollout_id)!;
        if (this.#storage.completeOutcome(message.rollout_id, outcome))
          await this.#signal.afterResult(slot, message);
        else if (!message.superseded) await this.#signal.judgeSlot(slot);
        return { ok: true, duplicate: true };
      }
      // A stand-in (a taken id, a slot cut before it ran) comes back through the queue: the tracker sent it itself.
      if (slotOfStandIn(message.rollout_id) !== undefined) return { ok: true, duplicate: true };
      return {
        ok: false,
        reason: "unknown_rollout",
        message: `${message.rollout_id} was not released by batch ${record.batch_id}`,
      };
    }
    const slot = this.#storage.slotOf(message.rollout_id);
    if (slot && message.termination_reason === "STALE") await this.#stale.memberStale(slot);
    if (slot) await this.#signal.afterResult(slot, message);
    await this.#fanOut.release();
    this.#finishIfDone();
    return { ok: true, duplicate: false };
  }

  /** Stops releasing, cancels every released rollout still running; unreleased ones are never created. */
  async cancel(): Promise<CancelResult> {
    const record = this.#storage.readBatch();
    if (!record) return { ok: false, reason: "not_found" };
    const now = this.#deps.now();
    if (record.cancelled_at === null && record.finished_at === null)
      this.#storage.writeBatch({ ...record, cancelled_at: now, updated_at: now });
    await this.#signal.judgeRows(await this.#fanOut.cancelLive(MAX_MAX_CONCURRENT));
    this.#finishIfDone();
    return { ok: true, progress: this.#progressOf(this.#storage.readBatch()!) };
  }

  /**
   * The feed dropped one of this batch's groups (a GroupDropNotice, validated here): a `stale`
   * drop is counted and refilled from the reserve rows, reopening a cut or finished batch.
   * Returns whether it counted (a repeated notice does not).
   */
  async groupDropped(notice: unknown): Promise<boolean> {
    const counted = await this.#stale.dropped(notice);
    if (counted) this.#finishIfDone();
    return counted;
  }

  /** Progress of the batch, or undefined if it was never submitted. */
  progress(): BatchProgress | undefined {
    const record = this.#storage.readBatch();
    return record ? this.#progressOf(record) : undefined;
  }

  /**
   * One page of the batch's rollouts in (row, sample) order, filtered (a RolloutListQuery, validated
   * here), with the total matching; undefined if the batch was never submitted, an issue list if
   * the query is invalid.
   */
  rollouts(
    input: unknown,
  ): RolloutListPage | { invalid: Array<{ path: string; message: string }> } | undefined {
    const record = this.#storage.readBatch();
    if (!record) return undefined;
    const query = RolloutListQuery.safeParse(input ?? {});
    if (!query.success)
      return {
        invalid: query.error.issues.map((issue) => ({
          path: issue.path.map(String).join(".") || "(query)",
          message: issue.message,
        })),
      };
    return listSlots(this.#deps.storage.sql, record, query.data);
  }

  /** The reward's distribution and its mean by data source and by agent, over finished rollouts. */
  summary(): BatchSummary | undefined {
    const record = this.#storage.readBatch();
    if (!record) return undefined;
    const sql = this.#deps.storage.sql;
    return {
      batch_id: record.batch_id,
      histogram: rewardHistogram(sql),
      by_data_source: rewardBy(sql, "data_source"),
      by_agent: rewardBy(sql, "agent"),
    };
  }

  /** The step numbers of the run view (reward spread, lengths, groups without signal, versions, throughput). */
  stepStats(): BatchStepStats | undefined {
    const record = this.#storage.readBatch();
    return record ? stepStats(this.#deps.storage.sql, record) : undefined;
  }

  /**
   * Keeps what the trainer reports of this batch (`report` is untrusted: validated here); undefined
   * if the batch was never submitted, the problems when the report is invalid.
   */
  reportTrainer(
    report: unknown,
  ): { ok: true } | { invalid: Array<{ path: string; message: string }> } | undefined {
    if (!this.#storage.readBatch()) return undefined;
    const parsed = TrainerReport.safeParse(report);
    if (!parsed.success)
      return {
        invalid: parsed.error.issues.map((issue) => ({
          path: issue.path.join(".") || "(body)",
          message: issue.message,
        })),
      };
    writeTrainerReport(this.#deps.storage.sql, parsed.data);
    return { ok: true };
  }

  /** What became of row `rowIndex`'s group (null: not complete yet); undefined if the batch was never submitted. */
  groupVerdict(
    rowIndex: number,
  ): { verdict: StoredVerdict; decided_at: number } | null | undefined {
    if (!this.#storage.readBatch()) return undefined;
    return this.#storage.verdictOf(rowIndex);
  }

  /** Per-row sample counts for pass@k (a sample passes at `passThreshold`) and the non-passing rollouts by termination reason. */
  evaluation(
    passThreshold: number,
  ): { rows: EvalRow[]; failures: Record<string, number> } | undefined {
    if (!this.#storage.readBatch()) return undefined;
    const threshold = Number.isFinite(passThreshold) ? passThreshold : 1;
    const sql = this.#deps.storage.sql;
    return { rows: evalRows(sql, threshold), failures: failureReasons(sql, threshold) };
  }

  /**
   * The alarm: recreate unconfirmed rollouts and ask sessions how live ones are, read back results
   * that never arrived, release into free slots (or keep cancelling), then re-arm until done.
   */
  async tick(): Promise<void> {
    const record = this.#storage.readBatch();
    if (!record || record.finished_at !== null) return;
    const now = this.#deps.now();
    if (record.cancelled_at !== null || record.cut_at !== null) {
      await this.#signal.judgeRows(await this.#fanOut.cancelLive(MAX_MAX_CONCURRENT));
      await this.#cutRequeued(record);
    } else {
      await this.#fanOut.check(record, CHECK_PER_TICK);
      await this.#pressure?.follow(record);
      if (!(await this.#stale.holding(record))) await this.#fanOut.release();
    }
    await this.#fanOut.readBack(now - RESULT_GRACE_MS, CHECK_PER_TICK, (slot, superseded) =>
      this.#signal.afterResult(slot, { superseded }),
    );
    if (!this.#finishIfDone()) await this.#deps.storage.setAlarm(this.#deps.now() + TICK_MS);
  }

  /** Marks the batch finished once nothing is left to release and nothing is live; returns whether it is. */
  #finishIfDone(): boolean {
    return this.#deps.storage.transactionSync(() => {
      const record = this.#storage.readBatch();
      if (!record) return false;
      if (record.finished_at !== null) return true;
      // Tree children are released by their parents' ends, before this runs: live parents keep it open.
      const drained =
        record.cancelled_at !== null ||
        record.cut_at !== null ||
        record.next_index === rootSlots(record);
      if (!drained || this.#storage.countLive() > 0 || (this.#pressure?.pending() ?? 0) > 0)
        return false;
      const now = this.#deps.now();
      this.#storage.writeBatch({ ...record, finished_at: now, updated_at: now });
      return true;
    });
  }

  /** A stopped batch's requeued slots never run again: each is recorded cut and gets a cut stand-in, so its group closes. */
  async #cutRequeued(record: BatchRecord): Promise<void> {
    const slots = this.#pressure?.drainStopped() ?? [];
    if (slots.length === 0) return;
    const now = this.#deps.now();
    this.#deps.storage.transactionSync(() => {
      this.#storage.insertReleased(slots, now);
      for (const slot of slots)
        this.#storage.recordOutcome(
          slot.rollout_id,
          { status: "cancelled", termination_reason: "CANCELLED", reward: null, outcome: "cut" },
          now,
        );
    });
    await this.#fanOut.standInCut(record, slots);
    await this.#signal.judgeRows(slots);
  }

  #progressOf(record: BatchRecord): BatchProgress {
    return buildProgress(record, this.#storage, this.#refill.counts(record));
  }
}
