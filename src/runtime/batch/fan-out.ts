/** @module Releasing a batch's rollouts in chunks, checking on them, and cancelling them. */
import type { Clock, ResultsQueuePort, StoragePort } from "../../ports";
import { isExternalAgent, RolloutSpec, runnerAgentOf } from "../../schemas/rollout-api";
import { TERMINAL_STATUSES } from "../../schemas/termination";
import type { RolloutSessionsPort } from "./batch-ports";
import { standInResult, type StandInKind } from "./taken-slot";
import { eachLimited } from "../each-limited";
import { slotAt, type BatchRecord, type RolloutSlot } from "./batch-state";
import type { BatchStorage } from "./batch-storage";
import type { CreateResult } from "../session";
import type { RolloutGroup } from "../../schemas/rollout-group";
import type { AgentDefinition } from "../../sdk/agent-registry";
import type { BatchPressure } from "./pressure-requeue";
import { MAX_MEMBER_RETRIES } from "../../schemas/member-outcome";
import {
  branchStepOf,
  childSlots,
  planTreeChild,
  rootSlots,
  slotGroup,
  subtreeSlots,
} from "./tree-slots";

/** Session RPCs a tracker keeps in flight at once while creating, checking or cancelling. */
export const SESSION_RPC_PARALLELISM = 16;

/** What fan-out needs from its tracker. */
export interface FanOutDeps {
  storage: BatchStorage;
  transactionSync: StoragePort["transactionSync"];
  sessions: RolloutSessionsPort;
  /** Where a stand-in result goes for a slot whose rollout id is taken (ROLLOUT_RESULTS). */
  results: ResultsQueuePort;
  /** An agent's definition, for a tree child's fork plan. */
  definition: (name: string) => AgentDefinition | undefined;
  now: Clock;
  /** True while an `on_stale: "wait"` batch holds its new rollouts (stale-refill.ts). */
  held?: () => boolean;
  /** KV-pressure control (pressure-requeue.ts): the release limit, requeued slots, and their count per slot. */
  pressure?: Pick<BatchPressure, "limit" | "take" | "requeuesOf">;
}

/** A tree child that can never be created: its parent ended before the branch step. */
type Refused = { ok: false; reason: "refused"; message: string };

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The batch's side of its rollouts. Slots are reserved in one transaction before any session is
 * called, so calls interleaving at an await (results arriving, the alarm, a cancel) can never put
 * more than `max_concurrent` rollouts in flight; a create that failed or never happened (a crash)
 * leaves its slot unconfirmed, and the alarm's `check` creates it again (create is idempotent).
 */
export class FanOut {
  readonly #deps: FanOutDeps;

  constructor(deps: FanOutDeps) {
    this.#deps = deps;
  }

  /** The group of a slot's run: the row's (`<batch_id>:<row>`, size n) for a root, its tree node's for a child. */
  groupFor(record: BatchRecord, slot: RolloutSlot): RolloutGroup {
    return {
      ...slotGroup(record, slot),
      batch_id: record.batch_id,
      training_mode: record.training_mode,
      data_manager: record.data_manager,
      attempt: slot.attempt ?? 0,
      // Runs requeued under KV pressure are not failures: they widen the slot's retry budget.
      max_member_retries: Math.min(
        MAX_MEMBER_RETRIES,
        record.max_member_retries + (this.#deps.pressure?.requeuesOf(slot) ?? 0),
      ),
      signal_filter: record.filter,
      on_infra_failure: record.on_infra_failure,
    };
  }

  /** The spec of one root rollout: the row's task as sample `s`, in group `<batch_id>:<row>` of size n. */
  specFor(record: BatchRecord, slot: RolloutSlot): RolloutSpec {
    const row = this.#deps.storage.readRow(slot.row_index);
    return RolloutSpec.parse({
      rollout_id: slot.rollout_id,
      kind: isExternalAgent(row.agent) ? "external" : "driven",
      // Nobody holds the key of a batch's external rollout: runners of its agent claim it.
      runner: runnerAgentOf(row.agent),
      agent: row.agent,
      task: { ...row.task, sample_id: slot.sample_index },
      config: record.config,
      group: this.groupFor(record, slot),
      created_at: this.#deps.now(),
    });
  }

  /** Releases rollouts into free slots (none once cancelled) and creates them; returns how many. */
  async release(): Promise<number> {
    const { storage } = this.#deps;
    const reserved = this.#deps.transactionSync(() => {
      const record = storage.readBatch();
      if (!record || record.cancelled_at !== null || record.cut_at !== null) return null;
      if (this.#deps.held?.()) return null;
      // Requeued slots first (pressure-requeue.ts), then roots: a tree's children are released by
      // their parents' ends (`branch`).
      const room =
        (this.#deps.pressure?.limit(record) ?? record.max_concurrent) - storage.countLive();
      const requeued = this.#deps.pressure?.take(room) ?? [];
      const count = Math.min(room - requeued.length, rootSlots(record) - record.next_index);
      if (count <= 0 && requeued.length === 0) return null;
      const now = this.#deps.now();
      const slots = [
        ...requeued,
        ...Array.from({ length: Math.max(0, count) }, (_, offset) =>
          slotAt(record, record.next_index + offset),
        ),
      ];
      storage.insertReleased(slots, now);
      const updated = {
        ...record,
        next_index: record.next_index + Math.max(0, count),
        updated_at: now,
      };
      storage.writeBatch(updated);
      return { record: updated, slots };
    });
    if (!reserved) return 0;
    await this.launch(reserved.record, reserved.slots);
    return reserved.slots.length;
  }

  /**
   * Releases the tree children of a node whose run just ended (none below the last branch step),
   * forked from that run at the next branch step. Children are not held back by `max_concurrent`:
   * a parent's end frees one place and releases `width`. Once the batch stopped they are recorded
   * cancelled and never created.
   */
  async branch(parent: RolloutSlot): Promise<void> {
    const { storage } = this.#deps;
    const reserved = this.#deps.transactionSync(() => {
      const record = storage.readBatch();
      const children = record ? childSlots(record, parent) : [];
      if (!record || children.length === 0) return null;
      storage.insertReleased(children, this.#deps.now());
      if (record.cancelled_at === null && record.cut_at === null) return { record, children };
      for (const child of children) this.#skip(record, child);
      return null;
    });
    if (reserved) await this.launch(reserved.record, reserved.children);
  }

  /** Records a tree slot that will never run, and its subtree, as cancelled (no feed group ever sees them). */
  #skip(record: BatchRecord, slot: RolloutSlot): void {
    const { storage } = this.#deps;
    const now = this.#deps.now();
    const slots = [slot, ...subtreeSlots(record, slot)];
    storage.insertReleased(slots, now);
    for (const skipped of slots)
      storage.recordOutcome(
        skipped.rollout_id,
        { status: "cancelled", termination_reason: "CANCELLED", reward: null, outcome: "cut" },
        now,
      );
  }

  /** Creates a tree child: its parent run's first k steps copied into it, continued by its own driver. */
  async #createChild(record: BatchRecord, slot: RolloutSlot): Promise<CreateResult | Refused> {
    const { sessions } = this.#deps;
    const source = await sessions.forkSource(slot.parent_id!, branchStepOf(slot));
    if (!source.ok)
      return { ok: false, reason: "refused", message: `parent ${slot.parent_id} does not exist` };
    const plan = planTreeChild({
      source,
      definition: this.#deps.definition(source.spec.agent),
      slot,
      group: this.groupFor(record, slot),
      now: this.#deps.now(),
    });
    if (!plan.ok) return { ok: false, reason: "refused", message: plan.message };
    return sessions.createFork(plan.spec, source.prefix!);
  }

  /**
   * Creates each rollout, or asks again (the same spec is a no-op that answers its status), and
   * records what the session says. A rollout id taken by a different rollout counts as failed, and
   * a stand-in result is announced for it so its feed group still closes.
   */
  async launch(record: BatchRecord, slots: readonly RolloutSlot[]): Promise<void> {
    const { storage, sessions } = this.#deps;
    const created: RolloutSlot[] = [];
    await eachLimited(slots, SESSION_RPC_PARALLELISM, async (slot) => {
      let result;
      try {
        result = slot.parent_id
          ? await this.#createChild(record, slot)
          : await sessions.create(this.specFor(record, slot));
      } catch (error) {
        // Left unconfirmed: the next check creates it again.
        console.error("batch rollout create failed", {
          rollout_id: slot.rollout_id,
          error: describe(error),
        });
        return;
      }
      const now = this.#deps.now();
      if (!result.ok && result.reason === "refused") {
        console.warn("tree child not forked: its parent cannot branch there", {
          rollout_id: slot.rollout_id,
          message: result.message,
        });
        this.#deps.transactionSync(() => this.#skip(record, slot));
        return;
      }
      if (!result.ok) {
        console.error("batch rollout id is taken by another rollout", {
          rollout_id: slot.rollout_id,
          message: result.message,
        });
        // Announced before the slot is closed: if the send fails, the slot stays unconfirmed and the alarm's check tries again.
        if (!(await this.#sendStandIn(record, slot, "taken"))) return;
        storage.recordOutcome(
          slot.rollout_id,
          { status: "failed", termination_reason: null, reward: null, outcome: "infra" },
          now,
        );
        return;
      }
      created.push(slot);
      if (TERMINAL_STATUSES.has(result.status)) storage.markTerminalSeen(slot.rollout_id, now);
      else storage.markCreated(slot.rollout_id, result.status as "queued" | "running", now);
    });
    // A cancel that ran while these creates were in flight found nothing to cancel yet.
    const stopped = storage.readBatch();
    if (created.length > 0 && (stopped?.cancelled_at != null || stopped?.cut_at != null))
      await this.#cancelSessions(created);
  }

  /** Asks the sessions of up to `limit` live rollouts how they are (unconfirmed ones first). */
  async check(record: BatchRecord, limit: number): Promise<void> {
    await this.launch(record, this.#deps.storage.listLive(limit));
  }

  /**
   * Reads back rollouts whose sessions ended before `before` but whose result message never came,
   * and hands each one read back with its signal (outcome and supersession) to `settle`, for the
   * tracker to act on as it would on its message: results go down a queue that a crash can empty,
   * and a session's delivery check only asks the feed, so a tracker must not need the message.
   * `settle` starts in the same synchronous stretch as the write that records the outcome, so its
   * reservation (a re-run, a tree node's children) commits with it: a crash in a later await can
   * no longer leave an outcome recorded whose slot is never re-run or branched (nothing reads an
   * outcome back twice).
   */
  async readBack(
    before: number,
    limit: number,
    settle: (slot: RolloutSlot, superseded: boolean) => Promise<void>,
  ): Promise<number> {
    const { storage, sessions } = this.#deps;
    let settled = 0;
    await eachLimited(storage.listOverdue(before, limit), SESSION_RPC_PARALLELISM, async (slot) => {
      let outcome;
      try {
        outcome = await sessions.outcome(slot.rollout_id);
      } catch (error) {
        console.error("batch rollout read-back failed", {
          rollout_id: slot.rollout_id,
          error: describe(error),
        });
        return;
      }
      if (!outcome || !TERMINAL_STATUSES.has(outcome.status)) return;
      if (!storage.recordOutcome(slot.rollout_id, outcome, this.#deps.now()) || !outcome.outcome)
        return;
      settled += 1;
      await settle(slot, outcome.superseded ?? false);
    });
    return settled;
  }

  /** Announces the stand-in result of a slot that never ran; false (logged) if the queue refused it. */
  async #sendStandIn(record: BatchRecord, slot: RolloutSlot, kind: StandInKind): Promise<boolean> {
    try {
      await this.#deps.results.send(standInResult(record, slot, kind, this.#deps.now()));
      return true;
    } catch (error) {
      console.error(`stand-in result (${kind}) not sent`, {
        rollout_id: slot.rollout_id,
        error: describe(error),
      });
      return false;
    }
  }

  /** Announces `cut` stand-ins for slots that will never be created, so their feed groups close. */
  async standInCut(record: BatchRecord, slots: readonly RolloutSlot[]): Promise<void> {
    await eachLimited(
      slots,
      SESSION_RPC_PARALLELISM,
      async (slot) => void (await this.#sendStandIn(record, slot, "cut")),
    );
  }

  /** Cancels every live rollout of the batch (those never created become cancelled as they are). */
  async cancelLive(limit: number): Promise<RolloutSlot[]> {
    return this.#cancelSessions(this.#deps.storage.listLive(limit));
  }

  /** Cancels the live root rollouts of row `rowIndex` (its group can no longer be trained); returns those recorded cancelled. */
  async cancelRow(rowIndex: number): Promise<RolloutSlot[]> {
    const live = this.#deps.storage.listLive(Number.MAX_SAFE_INTEGER);
    return this.#cancelSessions(
      live.filter((slot) => slot.row_index === rowIndex && !slot.parent_id),
    );
  }

  /** Cancels the slots' sessions; returns those recorded as cancelled here. */
  async #cancelSessions(slots: readonly RolloutSlot[]): Promise<RolloutSlot[]> {
    const { storage, sessions } = this.#deps;
    const ended: RolloutSlot[] = [];
    await eachLimited(slots, SESSION_RPC_PARALLELISM, async (slot) => {
      let result;
      try {
        result = await sessions.cancel(slot.rollout_id);
      } catch (error) {
        console.error("batch rollout cancel failed", {
          rollout_id: slot.rollout_id,
          error: describe(error),
        });
        return;
      }
      const now = this.#deps.now();
      const cancelled = {
        status: "cancelled" as const,
        termination_reason: "CANCELLED" as const,
        reward: null,
        outcome: "cut" as const,
      };
      if (!result.ok && result.reason === "not_found") {
        // Never created, so no session will publish its end: a stand-in closes its feed group.
        const record = storage.readBatch();
        if (record && !(await this.#sendStandIn(record, slot, "cut"))) return;
      }
      if (result.ok || result.reason === "not_found" || result.status === "cancelled") {
        if (storage.recordOutcome(slot.rollout_id, cancelled, now)) ended.push(slot);
      }
      // It ended on its own first: its result message carries the outcome.
      else storage.markTerminalSeen(slot.rollout_id, now);
    });
    return ended;
  }
}
