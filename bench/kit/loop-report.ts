/**
 * @module bench:loop's report lines that need nothing of the run but its numbers: the table rows,
 * the floor's three levels, and the price of 1M steps.
 */
import { perStep, type SessionUsage, type sharedObjectUsage } from "./object-usage";
import { priceMillionSteps } from "./pricing";
import type { R2Stored } from "./r2-bytes";
import type { FloorRun, PublicationLike } from "./workerd-floor";

/** A timed line: label, seconds, steps per second. */
export const row = (label: string, ms: number, n: number) =>
  `${label.padEnd(44)} ${(ms / 1000).toFixed(3).padStart(8)} s  ${(n / (ms / 1000)).toFixed(1).padStart(8)} steps/s`;

/** The lower median (the run's figure: one of the rounds, not an average of two). */
export const median = (xs: number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/** Each round's figure after a median, when there was more than one. */
export const spread = (xs: number[], digits: number) =>
  xs.length > 1 ? `  (rounds: ${xs.map((x) => x.toFixed(digits)).join(", ")})` : "";

/** One round of the floor: fetch only, with object RPCs per step, and with a publication per rollout too. */
export interface FloorRound {
  fetchOnly: FloorRun;
  withObjects: FloorRun;
  withPublication: FloorRun;
}

/** Ours' medians for one stack, as the floor lines compare them. */
export interface OursFigures {
  kind: string;
  cpuPerStep: number;
  wallMs: number;
}

/** The floor's lines, and ours above each of its levels. */
export function floorReport(input: {
  rounds: FloorRound[];
  rpcs: number;
  /** What ours published per rollout (R2 objects and bytes, a result message or not), and what the floor stored each round. */
  oursPublished: PublicationLike;
  floorStored: R2Stored[];
  ours: OursFigures[];
}): string[] {
  const { rounds, rpcs } = input;
  const fetchOnly = rounds.map((f) => f.fetchOnly);
  const objects = rounds.map((f) => f.withObjects);
  const published = rounds.map((f) => f.withPublication);
  const objectsCpu = median(objects.map((f) => f.cpuMsPerCall));
  const objectsMs = median(objects.map((f) => f.wallMs));
  const publishedCpu = median(published.map((f) => f.cpuMsPerCall));
  const simulatorsCpu = publishedCpu - objectsCpu;
  const floorObjects = median(input.floorStored.map((s) => s.objects));
  const lines = [
    row(
      `workerd floor: bare Worker, fetch only`,
      median(fetchOnly.map((f) => f.wallMs)),
      fetchOnly[0]!.calls,
    ) + `   ${median(fetchOnly.map((f) => f.cpuMsPerCall)).toFixed(2)} ms workerd CPU/step`,
    row(`workerd floor: + ${rpcs} object RPCs/step`, objectsMs, objects[0]!.calls) +
      `   ${objectsCpu.toFixed(2)} ms workerd CPU/step (one SQLite write per RPC)` +
      spread(
        objects.map((f) => f.cpuMsPerCall),
        2,
      ),
    row(
      `workerd floor: + publication per rollout`,
      median(published.map((f) => f.wallMs)),
      published[0]!.calls,
    ) +
      `   ${publishedCpu.toFixed(2)} ms workerd CPU/step (${floorObjects.toFixed(1)} R2 puts${input.oursPublished.announced ? " + 1 queue message" : ", no queue message (ours sends none for them)"} per rollout)` +
      spread(
        published.map((f) => f.cpuMsPerCall),
        2,
      ),
    `  of which Miniflare's local R2 and queue simulators, in the same workerd: ${simulatorsCpu.toFixed(2)} ms/step (production runs them as services: not the Worker's CPU)`,
    `  publication per rollout (R2 objects, body bytes stored): ours ${input.oursPublished.objects.toFixed(1)}, ${(input.oursPublished.bytes / 1024).toFixed(1)} KB; the floor ${floorObjects.toFixed(1)}, ${(median(input.floorStored.map((s) => s.bytes)) / 1024).toFixed(1)} KB (as many puts as ours, its record padded to ours' total: the local R2 simulator costs by the put and the byte)`,
  ];
  for (const ours of input.ours) {
    lines.push(
      `ours (${ours.kind}) above the floor: ${(ours.cpuPerStep - objectsCpu).toFixed(2)} ms CPU/step over the bare Worker with ${rpcs} object RPCs; wall ${(ours.wallMs / objectsMs).toFixed(2)}x of it`,
      `ours (${ours.kind}) above the floor with publication: ${(ours.cpuPerStep - publishedCpu).toFixed(2)} ms CPU/step; ours without the local simulators' share: ${(ours.cpuPerStep - simulatorsCpu).toFixed(2)} ms CPU/step`,
    );
  }
  return lines;
}

/** What pricing needs of one stack's run: its objects' counters and its CPU less the local simulators'. */
export interface PricedRun {
  kind: string;
  sessions: SessionUsage;
  shared: ReturnType<typeof sharedObjectUsage>;
  /** Steps the counters cover, and steps per rollout. */
  stepsDone: number;
  stepsPerRollout: number;
  workerCpuMs: number;
  sessionAwakeS: number;
  /** What this run's rollouts published each (measured objects; whether a result message went). */
  published: PublicationLike;
}

/** 1M steps priced on Workers Standard from a run's measured requests, rows and CPU, and the per-rollout counts the code makes. */
export function priceReport(run: PricedRun): string[] {
  const steps = run.stepsPerRollout;
  const per = (pick: Parameters<typeof perStep>[4]) =>
    perStep(run.sessions, run.shared, run.stepsDone, steps, pick);
  return [
    `priced per 1M steps on Workers Standard (${run.kind}; measured: requests, rows, CPU; counted from the code: 1 Worker request (created and followed at once, stream: true), and as for a rollout a trainer pulls 3 queue operations (the result message), 3 R2 writes and 1 read per rollout (this run's rollouts: ${run.published.objects.toFixed(2)} R2 writes, ${run.published.announced ? 3 : 0} queue operations); modelled: a session awake ${run.sessionAwakeS} s per step):`,
    ...priceMillionSteps({
      workerRequests: 1 / steps,
      workerCpuMs: run.workerCpuMs,
      objectRequests: per((u) => u.requests),
      sessionAwakeS: run.sessionAwakeS,
      sqliteRowsWritten: per((u) => u.sqlite.rows_written),
      sqliteRowsRead: per((u) => u.sqlite.rows_read),
      queueOperations: 3 / steps,
      r2ClassA: 3 / steps,
      r2ClassB: 1 / steps,
    }),
  ];
}
