/**
 * @module Tree rollouts in the session: a parent hands out its committed prefix (never changing
 * itself), and a child is created holding that prefix under its own ids, ready for a driver to
 * continue from step k (the driver's usual resume: agent replayed, env restored or replayed).
 */
import { LlmCall } from "../../../schemas/llm-call";
import type { RolloutSpec } from "../../../schemas/rollout-api";
import { Step } from "../../../schemas/step";
import type { RolloutStatus } from "../../../schemas/termination";
import {
  accountCall,
  type CreateResult,
  initialState,
  repeatedCreate,
  type SessionKernel,
} from "../kernel";
import { type ForkPrefix, rebasePrefix, selectPrefix } from "./fork-prefix";
import { appendFork } from "./fork-records";
import type { ForkRecord } from "../../../schemas/rollout-tree";

/**
 * `forkSource`: the parent's spec and progress, and its first `at_step` steps with their calls and
 * spans when it has committed that many (`prefix` null otherwise: the route says why).
 */
export type ForkSourceResult =
  | {
      ok: true;
      spec: RolloutSpec;
      status: RolloutStatus;
      step_count: number;
      last_step_done: boolean;
      prefix: ForkPrefix | null;
    }
  | { ok: false; reason: "not_found" };

/** The fork half of a session: read by a parent, written once by a child. */
export class SessionForkOps {
  readonly #kernel: SessionKernel;

  constructor(kernel: SessionKernel) {
    this.#kernel = kernel;
  }

  /**
   * What a fork at `atStep` copies. Read-only, and one RPC: the steps, calls and spans are read in
   * one turn of the object, so a commit cannot land between them (committed steps never change).
   */
  forkSource(atStep: number): ForkSourceResult {
    const spec = this.#kernel.spec;
    const state = this.#kernel.state;
    if (!spec || !state) return { ok: false, reason: "not_found" };
    const store = this.#kernel.store;
    const steps = state.step_count > 0 ? store.listSteps() : [];
    const base = {
      ok: true as const,
      spec,
      status: state.status,
      step_count: state.step_count,
      last_step_done: steps.at(-1)?.step.done ?? false,
    };
    if (atStep > state.step_count) return { ...base, prefix: null };
    const calls = atStep > 0 ? store.listCalls() : [];
    const spans = atStep > 0 ? store.listSpans() : [];
    return { ...base, prefix: selectPrefix(spec.rollout_id, atStep, { steps, calls, spans }) };
  }

  /** Lists a fork's children on the parent (its view's `forks`), once they exist; null when there is no such rollout. */
  recordFork(atStep: number, childIds: string[]): ForkRecord[] | null {
    if (!this.#kernel.spec) return null;
    return appendFork(this.#kernel.deps.storage.sql, atStep, childIds, this.#kernel.deps.now());
  }

  /**
   * Creates the child `spec` holding `prefix` (the parent's records, rebased here onto the child's
   * ids) in one transaction, then announces it like any new rollout. The same fork again (same
   * agent, task, config, group and tree) is a no-op; another rollout under the id is a conflict.
   */
  async createFork(spec: RolloutSpec, prefix: ForkPrefix): Promise<CreateResult> {
    const repeated = repeatedCreate(
      this.#kernel,
      spec,
      `rollout ${spec.rollout_id} already exists (not this fork)`,
    );
    if (repeated) return repeated;
    const rebased = rebasePrefix(prefix, spec.rollout_id);
    // Validated on write like every commit: these records cross an RPC boundary to get here.
    const calls = rebased.calls.map((call) => LlmCall.parse(call));
    const steps = rebased.steps.map(({ step, envSnapshot }) => ({
      step: Step.parse(step),
      envSnapshot,
    }));
    const now = this.#kernel.deps.now();
    let state = {
      ...initialState(now, spec.created_at + spec.config.rollout_timeout_ms),
      step_count: steps.length,
    };
    this.#kernel.deps.storage.transactionSync(() => {
      this.#kernel.store.writeSpec(spec);
      for (const call of calls)
        if (this.#kernel.store.insertCall(call)) state = accountCall(state, call);
      for (const { step, envSnapshot } of steps) this.#kernel.store.insertStep(step, envSnapshot);
      this.#kernel.store.appendSpans(rebased.spans, now);
      state = this.#kernel.save(state);
    });
    await this.#kernel.startDriving(state, spec);
    return { ok: true, created: true, rollout_id: spec.rollout_id, status: state.status };
  }
}
