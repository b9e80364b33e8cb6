/**
 * @module The simulated trainer of `npm run bench:train`: per step it takes `B × n` samples,
 * "trains" for `trainMs`, then syncs weights (`drain` or `interrupt`), in one of four schedules.
 * A sample is one streamed gateway call of its own external rollout (a one-turn agent); its
 * version is the trainer's version when the call was admitted (its oldest token's).
 */

/** What one mode's run measured. */
export interface ModeResult {
  name: string;
  samplesPerS: number;
  idlePct: number;
  syncP50S: number;
  syncMaxS: number;
  stalenessMax: number;
  tokensDiscarded: number;
  tokensGenerated: number;
}

/** A sample's end: its completion tokens, and whether the trainer gave it up before its end. */
export interface SampleEnd {
  tokens: number;
  aborted: boolean;
}

/** The stack the trainer drives. */
export interface TrainerStack {
  /**
   * Runs one sample (a streamed call) to its end, or until `signal` aborts it (the caller hangs
   * up: the gateway records the call and frees its admission); resolves with the tokens it got.
   */
  sample(signal?: AbortSignal): Promise<SampleEnd>;
  /** `sync/begin` in `mode` (waiting for drained calls), then `sync/end` with the next version; resolves with the wait in ms. */
  sync(mode: "drain" | "interrupt", nextVersion: number): Promise<number>;
}

/** One mode's schedule. */
export interface ModeSpec {
  name: string;
  schedule: "hybrid" | "one_step_off" | "async";
  syncMode: "drain" | "interrupt";
  /** Most versions a sample may lag the trainer (async only); older ones are discarded. */
  maxStaleness: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : sorted[Math.floor(sorted.length / 2)]!;
}

/** Runs `steps` trainer steps of `spec`; `version0` is the policy version now. */
export async function runMode(
  stack: TrainerStack,
  spec: ModeSpec,
  options: { batch: number; steps: number; trainMs: number; version0: number },
): Promise<ModeResult> {
  let version = options.version0;
  const syncWaits: number[] = [];
  let trainingMs = 0;
  let stalenessMax = 0;
  let discarded = 0;
  let generated = 0;
  // Measured from the first step's training on: filling the pipeline with the first batch is
  // start-up, paid once per run (of thousands of steps), not the steady state a schedule runs in.
  let started: number | undefined;
  let wallMs: number | undefined;
  const train = async () => {
    const t = performance.now();
    started ??= t;
    await sleep(options.trainMs);
    trainingMs += performance.now() - t;
  };
  const sync = async () => {
    syncWaits.push(await stack.sync(spec.syncMode, version + 1));
    version += 1;
  };
  const batchOf = () =>
    Array.from({ length: options.batch }, () =>
      stack.sample().then(({ tokens }) => ((generated += tokens), tokens)),
    );

  if (spec.schedule === "hybrid") {
    for (let step = 0; step < options.steps; step++) {
      await Promise.all(batchOf());
      await train();
      await sync();
    }
  } else if (spec.schedule === "one_step_off") {
    let next = Promise.all(batchOf());
    for (let step = 0; step < options.steps; step++) {
      await next;
      // The next batch is generated (under the current weights, one step stale) while this one trains.
      next = Promise.all(batchOf());
      stalenessMax = Math.max(stalenessMax, step === 0 ? 0 : 1);
      await train();
      await sync();
    }
    // The batch generated during the last step is the next step's: it is not this run's work.
    wallMs = performance.now() - started!;
    await next;
  } else {
    // Continuous generation: (1 + k) × `batch` samples always in flight; the trainer takes the first `batch` fresh enough.
    const ready: Array<{ version: number; tokens: number }> = [];
    let stopping = false;
    let inFlight = 0;
    // A sample started at version v may be trained up to version v + k. Once a sync passes that,
    // it is doomed: generating on would only make tokens to throw away and hold a slot a fresh
    // sample could use, so the trainer hangs up on it (its tokens so far count as discarded).
    const generating = new Set<{ version: number; abort: AbortController }>();
    const dropDoomed = () => {
      for (const sample of generating)
        if (version - sample.version > spec.maxStaleness) sample.abort.abort();
      for (let i = ready.length - 1; i >= 0; i--) {
        if (version - ready[i]!.version > spec.maxStaleness)
          discarded += ready.splice(i, 1)[0]!.tokens;
      }
    };
    // Up to 1 + k batches outstanding (generating, or generated and not yet trained on), as verl's
    // fully_async rollouter stops generating ahead of the trainer past its staleness threshold and
    // AReaL admits a rollout only while the trainer can take it within its staleness bound. A cap
    // on calls in flight alone lets finished samples pile up past the bound, to be thrown away.
    const outstandingCap = options.batch * (1 + spec.maxStaleness);
    const worker = async () => {
      while (!stopping) {
        if (inFlight + ready.length >= outstandingCap) {
          await sleep(2);
          continue;
        }
        inFlight += 1;
        const entry = { version, abort: new AbortController() };
        generating.add(entry);
        try {
          const { tokens, aborted } = await stack.sample(entry.abort.signal);
          generated += tokens;
          if (aborted) discarded += tokens;
          else ready.push({ version: entry.version, tokens });
        } finally {
          generating.delete(entry);
          inFlight -= 1;
        }
      }
    };
    const workers = Array.from({ length: outstandingCap }, () => worker());
    for (let step = 0; step < options.steps; step++) {
      let taken = 0;
      while (taken < options.batch) {
        // Oldest version first: a sample near its staleness bound is trained while it still may be
        // (first come would leave a long, early-started sample behind fresher ones, to go stale).
        ready.sort((a, b) => a.version - b.version);
        const sample = ready.shift();
        if (!sample) {
          await sleep(2);
          continue;
        }
        const lag = version - sample.version;
        if (lag > spec.maxStaleness) {
          discarded += sample.tokens;
          continue;
        }
        stalenessMax = Math.max(stalenessMax, lag);
        taken += 1;
      }
      await train();
      await sync();
      dropDoomed();
    }
    // The run ends with its last step; the samples still generating belong to the steps to come,
    // so waiting them out (the tail!) is not charged to it.
    wallMs = performance.now() - started!;
    stopping = true;
    await Promise.all(workers);
  }
  wallMs ??= performance.now() - started!;
  return {
    name: spec.name,
    samplesPerS: (options.batch * options.steps) / (wallMs / 1000),
    idlePct: 100 * (1 - trainingMs / wallMs),
    syncP50S: median(syncWaits) / 1000,
    syncMaxS: Math.max(0, ...syncWaits) / 1000,
    stalenessMax,
    tokensDiscarded: discarded,
    tokensGenerated: generated,
  };
}
