/**
 * @module The simulated trainer of `npm run bench:train`: per step it takes `batch` GRPO groups,
 * trains for a time proportional to their tokens (capacity.ts), then syncs weights (`drain` or
 * `interrupt`), in one of three schedules. A group is its n samples, each one streamed gateway
 * call of its own external rollout; its version is the trainer's version when it was admitted
 * (its oldest token's). Groups are numbered in admission order, so every mode generates the same
 * groups (the gateway's sample key `<group>:<member>` fixes each member's length).
 */

/** What one group's generation came to. */
export interface GroupEnd {
  /** Completion tokens of every member, in member order (what it got before an abort). */
  tokens: number[];
  /** Whether the trainer gave the group up before its end. */
  aborted: boolean;
}

/** The stack the trainer drives. */
export interface TrainerStack {
  /**
   * Generates group `index` (n streamed calls at once) to its end, or until `signal` aborts it (the
   * caller hangs up: the gateway records each call and frees its admission).
   */
  group(index: number, signal?: AbortSignal): Promise<GroupEnd>;
  /** `sync/begin` in `mode` (waiting for drained calls), then `sync/end` with the next version; resolves with the wait in ms. */
  sync(mode: "drain" | "interrupt", nextVersion: number): Promise<number>;
}

/** One mode's schedule. */
export interface ModeSpec {
  name: string;
  schedule: "hybrid" | "one_step_off" | "async";
  syncMode: "drain" | "interrupt";
  /** Most versions a group may lag the trainer (async only); older ones are discarded. */
  maxStaleness: number;
}

/** How a mode runs: fixed before the run. */
export interface LoopOptions {
  /** Groups per training step. */
  batch: number;
  /** Untimed steps first (filling the pipeline, the JIT). */
  warmUpSteps: number;
  /** Timed steps after them. */
  steps: number;
  /** Wall ms training `tokens` takes on this mode's trainer GPUs. */
  trainMs(tokens: number): number;
  /** The policy version now. */
  version0: number;
  /** Called once when the timed window opens (after the warm-up steps' syncs). */
  onTimed?(): void | Promise<void>;
  /** Called once when it closes (after the last step's sync). */
  onClosed?(): void | Promise<void>;
}

/** What one mode's timed window measured. */
export interface ModeResult {
  name: string;
  wallMs: number;
  trainedTokens: number;
  trainedSamples: number;
  /** Share of the window the trainer spent training. */
  trainerBusy: number;
  syncWaitsMs: number[];
  stalenessMax: number;
  /** Tokens generated in the window and thrown away (aborted as doomed, or trained too late). */
  discardedTokens: number;
  /** Member lengths of every group that finished, by group index (the same-outcomes check). */
  lengths: Map<number, number[]>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** Runs `warmUpSteps + steps` trainer steps of `spec`, timing the last `steps`. */
export async function runMode(
  stack: TrainerStack,
  spec: ModeSpec,
  options: LoopOptions,
): Promise<ModeResult> {
  let version = options.version0;
  let stepsDone = 0;
  let nextGroup = 0;
  let opened: number | undefined;
  let closed: number | undefined;
  const window = {
    trainingMs: 0,
    trainedTokens: 0,
    trainedSamples: 0,
    discarded: 0,
    syncWaits: [] as number[],
  };
  let stalenessMax = 0;
  const lengths = new Map<number, number[]>();
  const timed = () => opened !== undefined && closed === undefined;

  const generate = async (signal?: AbortSignal) => {
    const index = nextGroup++;
    const end = await stack.group(index, signal);
    if (!end.aborted) lengths.set(index, end.tokens);
    return end;
  };
  const train = async (groups: number[][]) => {
    const tokens = sum(groups.map(sum));
    const t = performance.now();
    await sleep(options.trainMs(tokens));
    if (timed()) {
      window.trainingMs += performance.now() - t;
      window.trainedTokens += tokens;
      window.trainedSamples += sum(groups.map((g) => g.length));
    }
  };
  /** Syncs, then opens the timed window after the warm-up steps and closes it after the last step. */
  const sync = async () => {
    const waited = await stack.sync(spec.syncMode, version + 1);
    version += 1;
    if (timed()) window.syncWaits.push(waited);
    stepsDone += 1;
    if (stepsDone === options.warmUpSteps) {
      await options.onTimed?.();
      opened = performance.now();
    }
    if (stepsDone === options.warmUpSteps + options.steps) {
      closed = performance.now();
      await options.onClosed?.();
    }
  };
  const total = options.warmUpSteps + options.steps;
  if (options.warmUpSteps === 0) {
    await options.onTimed?.();
    opened = performance.now();
  }
  const batchOf = () =>
    Promise.all(Array.from({ length: options.batch }, () => generate().then((g) => g.tokens)));

  if (spec.schedule === "hybrid") {
    // All GPUs generate the whole batch, then the same GPUs train on it.
    for (let step = 0; step < total; step++) {
      await train(await batchOf());
      await sync();
    }
  } else if (spec.schedule === "one_step_off") {
    let next = batchOf();
    for (let step = 0; step < total; step++) {
      const groups = await next;
      // The next batch generates (under the current weights, one step stale) while this one trains.
      next = batchOf();
      if (step > 0) stalenessMax = Math.max(stalenessMax, 1);
      await train(groups);
      await sync();
    }
    // The batch generated during the last step is the next step's: not this window's work.
    await next;
  } else {
    await runAsync();
  }

  async function runAsync(): Promise<void> {
    // Continuous generation: at most (1 + k) × batch groups outstanding (generating, or generated
    // and not yet trained), as verl's fully_async rollouter stops generating ahead of the trainer
    // past its staleness threshold and AReaL admits a rollout only while the trainer can take it
    // within its staleness bound.
    const ready: Array<{ version: number; tokens: number[] }> = [];
    const generating = new Set<{ version: number; abort: AbortController }>();
    const cap = options.batch * (1 + spec.maxStaleness);
    let stopping = false;
    let waiting: (() => void) | null = null;
    const wake = () => {
      waiting?.();
      waiting = null;
    };
    const discard = (tokens: number) => {
      if (timed()) window.discarded += tokens;
    };
    // A group started at version v may be trained up to version v + k. Once a sync passes that it
    // is doomed: generating on would only make tokens to throw away and hold slots a fresh group
    // could use, so the trainer hangs up on it (its tokens so far are discarded).
    const dropDoomed = () => {
      for (const group of generating)
        if (version - group.version > spec.maxStaleness) group.abort.abort();
      for (let i = ready.length - 1; i >= 0; i--)
        if (version - ready[i]!.version > spec.maxStaleness)
          discard(sum(ready.splice(i, 1)[0]!.tokens));
    };
    const worker = async () => {
      while (!stopping) {
        if (generating.size + ready.length >= cap) {
          await sleep(2);
          continue;
        }
        const entry = { version, abort: new AbortController() };
        generating.add(entry);
        try {
          const end = await generate(entry.abort.signal);
          if (end.aborted) discard(sum(end.tokens));
          else ready.push({ version: entry.version, tokens: end.tokens });
          wake();
        } finally {
          generating.delete(entry);
        }
      }
    };
    const workers = Array.from({ length: cap }, () => worker());
    for (let step = 0; step < total; step++) {
      const groups: number[][] = [];
      while (groups.length < options.batch) {
        // Oldest version first: a group near its bound is trained while it still may be.
        ready.sort((a, b) => a.version - b.version);
        const group = ready.shift();
        if (!group) {
          await new Promise<void>((resolve) => (waiting = resolve));
          continue;
        }
        const lag = version - group.version;
        if (lag > spec.maxStaleness) {
          discard(sum(group.tokens));
          continue;
        }
        stalenessMax = Math.max(stalenessMax, lag);
        groups.push(group.tokens);
      }
      await train(groups);
      await sync();
      dropDoomed();
    }
    // The groups still generating belong to the steps to come: waiting them out is not charged.
    stopping = true;
    for (const group of generating) group.abort.abort();
    await Promise.all(workers);
  }

  return {
    name: spec.name,
    wallMs: closed! - opened!,
    trainedTokens: window.trainedTokens,
    trainedSamples: window.trainedSamples,
    trainerBusy: window.trainingMs / (closed! - opened!),
    syncWaitsMs: window.syncWaits,
    stalenessMax,
    discardedTokens: window.discarded,
    lengths,
  };
}
