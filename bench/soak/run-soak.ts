/**
 * @module The soak: batches of every authoring style and external rollouts against the vLLM
 * simulator with injected faults, the local stack killed and restarted mid-run, queue batches
 * delivered twice; then every rollout is checked terminal and the feed drained.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { type LocalStack, startLocalStack } from "../../scripts/local-stack";
import { startVllmSimulator } from "../../tools/simulator";
import { createSoakHttp, type HttpTally } from "./soak-http";
import { externalGroupUid, runExternalGroups } from "./soak-externals";
import {
  batchGroups,
  drainAndAccount,
  type ExpectedGroup,
  type FeedAccounting,
  type SubmittedGroup,
} from "./soak-accounting";

/** Agents run as batches: two stepwise (math, calculator with tools), a function agent, a LitAgent, a workflow. */
export const BATCH_AGENTS = [
  "math",
  "calculator",
  "soak-function",
  "soak-lit",
  "soak-workflow",
] as const;

/** The soak's size and faults. */
export interface SoakOptions {
  batchesPerAgent: number;
  rowsPerBatch: number;
  n: number;
  externalGroups: number;
  /** Stack kills, spread over the run (at progress (k+1)/(kills+1), or of 60% of `timeoutMs` if sooner). */
  kills: number;
  /** Fault rates of the simulator (5xx, 429, hang, malformed). */
  faults: { rate5xx: number; rate429: number; rateTimeout: number; rateMalformed: number };
  duplicateRate: number;
  /** Share of the soak agents' attempts whose environment fails (soak-faults.ts). */
  envFaultRate: number;
  workerPort: number;
  /** Gives up waiting for the run after this long. */
  timeoutMs: number;
  log?: (line: string) => void;
}

/** What the soak measured. */
export interface SoakReport extends FeedAccounting {
  /** Every rollout the soak made: batch slots' runs (re-runs included) and external rollouts. */
  total: number;
  terminalWithReason: number;
  lost: string[];
  byReason: Record<string, number>;
  /** Creates (and finishes) that no answer confirmed even after retries across the restarts. */
  requestFailures: string[];
  admissionsInFlight: number | null;
  fivexx: number;
  fivexxBy: Record<string, number>;
  unreachable: number;
  kills: number;
  duplicatedDeliveries: number;
  /** Model faults the simulator injected, by kind. */
  injected: Record<string, number>;
  /** Environment faults the soak agents injected. */
  envFaults: number;
  generationRequests: number;
  /** Slots the soak submitted (batches' rows × n, external groups × 4). */
  submittedSlots: number;
  /** True when the run gave up waiting for its batches (a failed run). */
  stoppedOnDeadline: boolean;
  seconds: number;
}

const root = resolve(import.meta.dirname, "../..");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the soak and returns its figures; every process it starts is stopped before it returns. */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const runId = started.toString(36);
  const rows = readFileSync(resolve(root, "test/fixtures/datasets/calculator.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as unknown);
  const sim = await startVllmSimulator({
    port: 0,
    seed: 11,
    faults: { ...options.faults, hangMs: 20_000 },
  });
  const stackOptions = {
    workerPort: options.workerPort,
    modelServerUrl: sim.url,
    main: "bench/soak/soak-worker.ts",
    stateDir: `.tmp/soak-${runId}`,
    // A hang costs one short attempt, not a step: first byte within 1.5 s, 10 ms per allowed token.
    vars: {
      UPSTREAM_FIRST_BYTE_TIMEOUT_MS: "1500",
      UPSTREAM_MS_PER_TOKEN: "10",
      SOAK_DUPLICATE_RATE: String(options.duplicateRate),
      SOAK_ENV_FAULT_RATE: String(options.envFaultRate),
      ...(process.env.FEED_SHARDS ? { FEED_SHARDS: process.env.FEED_SHARDS } : {}),
    },
  };
  let stack: LocalStack = await startLocalStack(stackOptions);
  const tally: HttpTally = { fivexx: 0, fivexxBy: {}, unreachable: 0 };
  const http = createSoakHttp(() => stack.workerUrl, tally);
  let duplicatedDeliveries = 0;
  let envFaults = 0;
  // What this incarnation of the Worker injected; read before each kill, since a kill loses it.
  const readStats = async (): Promise<void> => {
    const stats = (
      await http.json<{ duplicated_deliveries?: number; env_faults?: number }>("/soak/stats")
    ).body;
    duplicatedDeliveries += stats.duplicated_deliveries ?? 0;
    envFaults += stats.env_faults ?? 0;
  };
  let kills = 0;
  let stoppedOnDeadline = false;
  const requestFailures: string[] = [];
  try {
    const batchIds: string[] = [];
    // Submitted while the run is watched, so the kills fall across the whole run (submitting 40
    // batches twice takes a while, and the first rollouts end meanwhile).
    let submittedAll = false;
    const submitting = (async () => {
      for (const agent of BATCH_AGENTS) {
        for (let b = 0; b < options.batchesPerAgent; b++) {
          const offset = (b * options.rowsPerBatch) % rows.length;
          const batch = {
            batch_id: `soak-${runId}-${agent}-${b}`,
            agent,
            rows: Array.from(
              { length: options.rowsPerBatch },
              (_, i) => rows[(offset + i) % rows.length],
            ),
            n: options.n,
            mode: "train",
            training_mode: "async",
            data_manager: "train",
            // A short step budget keeps a crashed driver's lease (step_timeout_ms + 15 s) from stalling the run.
            config: { max_steps: 6, step_timeout_ms: 20_000 },
          };
          // Submitted twice: the second submission must create nothing.
          for (let copy = 0; copy < 2; copy++) {
            const answer = await http.create<{ batch_id?: string; created?: boolean }>(
              "/v1/batches",
              batch,
              (body) => body.batch_id === batch.batch_id && typeof body.created === "boolean",
            );
            if (!answer.ok) requestFailures.push(`batch ${batch.batch_id}: ${answer.reason}`);
            else if (copy === 1 && answer.body.created)
              requestFailures.push(
                `batch ${batch.batch_id}: the second submission created it again`,
              );
          }
          batchIds.push(batch.batch_id);
        }
      }
      submittedAll = true;
    })();
    const batchTotal =
      BATCH_AGENTS.length * options.batchesPerAgent * options.rowsPerBatch * options.n;
    log(
      `submitting ${BATCH_AGENTS.length * options.batchesPerAgent} batches (${batchTotal} rollouts), starting ${options.externalGroups * 4} external rollouts`,
    );
    const externals = runExternalGroups(http, runId, options.externalGroups, 6);
    externals.catch(() => undefined);

    const progress = async (): Promise<number> => {
      let ended = 0;
      for (const id of batchIds) {
        const view = await http.json<{ counts?: Record<string, number> }>(`/v1/batches/${id}`);
        const counts = view.body.counts ?? {};
        ended += (counts.succeeded ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0);
      }
      return ended;
    };
    const deadline = started + options.timeoutMs;
    for (;;) {
      const ended = await progress();
      log(`progress ${ended}/${batchTotal} (kills ${kills}, 5xx seen ${tally.fivexx})`);
      if (ended >= batchTotal && submittedAll) break;
      if (Date.now() > deadline) {
        stoppedOnDeadline = true;
        break;
      }
      // Crash k comes at k/(kills+1) of the rollouts ended, or of 60% of the time budget if that is
      // sooner (a slow machine), so every crash lands mid-run with work in flight.
      const share = (kills + 1) / (options.kills + 1);
      if (
        kills < options.kills &&
        (ended >= share * batchTotal || Date.now() - started >= share * 0.6 * options.timeoutMs)
      ) {
        await readStats();
        // A crash, not a shutdown: the whole workerd tree dies at once.
        process.kill(-stack.wrangler.pid!, "SIGKILL");
        await stack.stop();
        kills++;
        log(`killed the stack (${kills}); restarting`);
        stack = await startLocalStack(stackOptions);
      }
      // While a crash is still due, look often: a small run can go from under its crash share to
      // all ended within a second, and would then end with no crash at all (the tiny soak e2e once did).
      await sleep(kills < options.kills ? 200 : 1_000);
    }
    await submitting;
    const { ids: externalIds, failures: externalFailures } = await externals;
    requestFailures.push(...externalFailures);
    await readStats();

    // Every rollout, re-runs of failed slots included: terminal with a reason? (External ones may
    // still be waiting for their idle watchdog.)
    // Waits until every run's result reached its tracker (a crash may have lost some; sessions re-send them).
    const settling = Date.now();
    const batches = await batchGroups(http, batchIds);
    log(`batch listings settled in ${Math.round((Date.now() - settling) / 1000)} s`);
    const ids = [...batches.ids, ...externalIds];
    const byReason: Record<string, number> = {};
    const outcomes = new Map<string, string | null>();
    const lost: string[] = [];
    for (const id of ids) {
      let view: { status?: string; termination_reason?: string | null; outcome?: string | null } =
        {};
      for (let tries = 0; tries < 40; tries++) {
        view = (await http.json<typeof view>(`/v1/rollouts/${encodeURIComponent(id)}`)).body;
        if (view.termination_reason) break;
        await sleep(1_000);
      }
      outcomes.set(id, view.outcome ?? null);
      if (view.termination_reason)
        byReason[view.termination_reason] = (byReason[view.termination_reason] ?? 0) + 1;
      else lost.push(id);
    }
    const externalGroups: ExpectedGroup[] = Array.from(
      { length: options.externalGroups },
      (_, group) => {
        const uid = externalGroupUid(runId, group);
        return {
          uid,
          batchId: null,
          finalRuns: externalIds
            .filter((id) => id.startsWith(`${uid}-`))
            .map((id) => ({ rollout_id: id, outcome: outcomes.get(id) ?? null })),
        };
      },
    );
    // What the soak submitted, not what the system lists: a slot the system forgot is unaccounted.
    const submitted: SubmittedGroup[] = [
      ...batchIds.flatMap((batchId) =>
        Array.from({ length: options.rowsPerBatch }, (_, row) => ({
          uid: `${batchId}:${row}`,
          size: options.n,
        })),
      ),
      ...Array.from({ length: options.externalGroups }, (_, group) => ({
        uid: externalGroupUid(runId, group),
        size: 4,
      })),
    ];
    const accounting = await drainAndAccount(
      http,
      [...batches.groups, ...externalGroups],
      externalGroupUid(runId, 0).replace(/-0$/, "-"),
      batches.retried,
      submitted,
    );
    const policy = (await http.json<{ in_flight?: number }>("/v1/policy")).body;
    const stats = sim.stats();
    return {
      total: ids.length,
      terminalWithReason: ids.length - lost.length,
      lost,
      byReason,
      ...accounting,
      requestFailures,
      admissionsInFlight: typeof policy.in_flight === "number" ? policy.in_flight : null,
      fivexx: tally.fivexx,
      fivexxBy: tally.fivexxBy,
      unreachable: tally.unreachable,
      kills,
      duplicatedDeliveries,
      injected: { ...stats.faults },
      envFaults,
      submittedSlots: submitted.reduce((sum, group) => sum + group.size, 0),
      stoppedOnDeadline,
      generationRequests:
        (stats.byEndpoint["POST /v1/chat/completions"] ?? 0) +
        (stats.byEndpoint["POST /v1/completions"] ?? 0),
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await stack.stop();
    await sim.close();
  }
}
