/**
 * @module `edge-rollout drain --out FILE.jsonl` (or `--format arrow --out FOLDER`): pull complete
 * GRPO groups, write their samples, ack.
 */
import { PULL_METADATA_KEY, type ArrowPullMetadata } from "../../../src/schemas/pull-metadata";
import {
  BatchCounts,
  type DroppedGroup,
  type FeedStats,
  type InlineFeedGroup,
  type PullResponse,
  zeroBatchCounts,
} from "../../../src/schemas/feed";
import { ARROW_STREAM_MEDIA_TYPE } from "../../../src/sink/formats/arrow/arrow-format";
import { decodeArrowStream } from "../../../src/sink/formats/arrow/arrow-read";
import type { ApiClient } from "../api-client";
import { ExitCode, OperationError } from "../errors";
import { InterruptWatch, sleep } from "../interrupt";
import type { Output } from "../output";
import { SampleArrowDir } from "../sample-arrow-dir";
import { SampleFile } from "../sample-file";

/** What `drain` writes: JSON lines in one file, or a folder of Arrow IPC stream files. */
export type DrainFormat = "jsonl" | "arrow";

/** The formats `--format` accepts. */
export const DRAIN_FORMATS: readonly DrainFormat[] = ["jsonl", "arrow"];

/** One pull as drain uses it: the lease, each member's rollout id and read error, and how to write its samples. */
interface DrainPull {
  lease_id: string | null;
  groups: Array<{ members: Array<{ rollout_id: string; record_error?: string | undefined }> }>;
  samples: number;
  /** Groups of the pulled batches the feed dropped (reported again on every pull naming them). */
  dropped: DroppedGroup[];
  write(): { written: number; skipped: number };
}

/** Where drain writes, opened once. */
interface SampleSink {
  readonly existing: number;
  readonly repairedBytes: number;
  close(): void;
}

async function pullJsonl(client: ApiClient, body: unknown, file: SampleFile): Promise<DrainPull> {
  const pulled = await client.post<PullResponse<InlineFeedGroup>>("/v1/feed/pull", body);
  const samples = pulled.groups.flatMap((group) =>
    group.members.flatMap((member) => member.samples),
  );
  return {
    lease_id: pulled.lease_id,
    groups: pulled.groups,
    samples: samples.length,
    dropped: pulled.dropped_groups ?? [],
    write: () => file.append(samples),
  };
}

async function pullArrow(
  client: ApiClient,
  body: unknown,
  dir: SampleArrowDir,
): Promise<DrainPull> {
  const { contentType, bytes } = await client.postForBytes(
    "/v1/feed/pull",
    body,
    ARROW_STREAM_MEDIA_TYPE,
  );
  if (!contentType.startsWith(ARROW_STREAM_MEDIA_TYPE))
    throw new OperationError(
      `the server answered a pull with ${contentType || "no content type"}, not Arrow: it predates the Arrow feed; drain with --format jsonl`,
    );
  const meta = JSON.parse(
    decodeArrowStream(bytes).metadata[PULL_METADATA_KEY] ?? "null",
  ) as ArrowPullMetadata | null;
  if (!meta) throw new OperationError(`the Arrow pull carries no ${PULL_METADATA_KEY} metadata`);
  return {
    lease_id: meta.lease_id,
    groups: meta.groups,
    samples: meta.samples,
    dropped: meta.dropped_groups ?? [],
    write: () => dir.append(bytes),
  };
}

/** `drain`'s options after parsing. */
export interface DrainOptions {
  /** A JSONL file (`jsonl`) or a folder (`arrow`). */
  out: string;
  /** Default `jsonl`. */
  format?: DrainFormat;
  /** Stop after this many groups (default: until the feed is empty). */
  maxGroups?: number;
  /** Groups per pull (1..1024). */
  perPull: number;
  leaseMs: number;
  trainingMode?: string;
  /** Pull only these batches and their chunks (`<id>.chunk<k>`, as `submit` splits a large file). */
  batch?: string[];
  minPolicyVersion?: number;
  /** With nothing ready but groups still pending (incomplete), keep polling this long. */
  waitMs: number;
  /** Keep polling until Ctrl-C or --max-groups, even when the feed is empty. */
  follow: boolean;
  intervalMs: number;
}

/** What a drain did: the `--json` document. */
export interface DrainSummary {
  ok: boolean;
  out: string;
  stopped: "empty" | "max_groups" | "waited" | "interrupted";
  pulls: number;
  groups: number;
  /** Samples in the pulled groups: written + duplicates_skipped. */
  samples_pulled: number;
  samples_written: number;
  duplicates_skipped: number;
  samples_in_file: number;
  acked_leases: number;
  expired_leases: number;
  unacked_leases: number;
  record_errors: Array<{ rollout_id: string; error: string }>;
  /** With `--batch`: groups of those batches the feed dropped instead of delivering (never in the output). */
  dropped_groups: DroppedGroup[];
  /** Groups the feed holds at the end (only `--batch`'s batches when given). */
  feed: BatchCounts;
}

/** The text summary. */
export function formatDrainSummary(s: DrainSummary): string {
  const lines = [
    `wrote ${s.samples_written} samples from ${s.groups} groups to ${s.out} (${s.samples_in_file} samples in the file; ${s.duplicates_skipped} already there, skipped)`,
    `  ${s.pulls} pulls, ${s.acked_leases} leases acked${s.expired_leases ? `, ${s.expired_leases} expired before the ack (their groups come back; already-written samples are skipped)` : ""}`,
    `  stopped: ${{ empty: "the feed is empty", max_groups: "--max-groups reached", waited: "nothing became ready within --wait-ms", interrupted: "interrupted" }[s.stopped]}; feed now: ready ${s.feed.ready_groups}, pending ${s.feed.pending_groups}, leased ${s.feed.leased_groups} groups`,
  ];
  if (s.dropped_groups.length > 0) {
    const first = s.dropped_groups[0]!;
    lines.push(
      `  ${s.dropped_groups.length} groups of these batches were dropped by the feed, never delivered (${first.reason}: e.g. ${first.uid} ${whyDropped(first)})`,
    );
    const reasons = new Map<string, number>();
    for (const group of s.dropped_groups)
      reasons.set(group.reason, (reasons.get(group.reason) ?? 0) + 1);
    if (reasons.size > 1)
      lines.push(
        `  dropped by reason: ${[...reasons].map(([reason, n]) => `${reason} ${n}`).join(", ")}`,
      );
  }
  for (const e of s.record_errors)
    lines.push(
      `  record error ${e.rollout_id}: ${e.error} (its lease was not acked; the groups return after it expires)`,
    );
  return lines.join("\n");
}

/** Why the feed dropped `group`, in words for the summary line. */
function whyDropped(group: DroppedGroup): string {
  switch (group.reason) {
    case "stale":
      return `was sampled at policy version ${group.policy_version_start}, ${group.training_mode} allows ${group.max_staleness} behind version ${group.policy_version}`;
    case "no_signal":
      return `had no signal: every member scored alike on ${group.metric ?? "reward"}`;
    default: {
      const failed = group.failed_members ?? [];
      const what =
        group.reason === "cut"
          ? "were cut"
          : group.reason === "cancelled"
            ? "were cancelled while they ran, the policy too far ahead of their oldest token (STALE)"
            : "failed for infrastructure";
      return `held ${failed.length} member${failed.length === 1 ? "" : "s"} that ${what} (${failed
        .slice(0, 3)
        .map((m) => `#${m.sample_index} ${m.termination_reason ?? m.outcome}`)
        .join(", ")})`;
    }
  }
}

/** The pull filter of `--batch`: the ids themselves and their chunks. */
function batchSelector(batches: string[]): { batch_id: string[]; batch_prefix: string[] } {
  return { batch_id: batches, batch_prefix: batches.map((id) => `${id}.chunk`) };
}

/** Groups the feed holds now: all of them, or with `--batch` only those batches' (chunks included). */
async function waitingGroups(
  client: ApiClient,
  batches: string[] | undefined,
): Promise<BatchCounts> {
  if (!batches) {
    const stats = await client.get<FeedStats>("/v1/feed/stats");
    return BatchCounts.parse(stats);
  }
  const selector = batchSelector(batches);
  const query = new URLSearchParams([
    ...selector.batch_id.map((id) => ["batch_id", id]),
    ...selector.batch_prefix.map((p) => ["batch_prefix", p]),
  ]);
  const stats = await client.get<FeedStats>(`/v1/feed/stats?${query}`);
  const total = zeroBatchCounts();
  for (const counts of Object.values(stats.by_batch)) {
    for (const key of Object.keys(total) as Array<keyof BatchCounts>) total[key] += counts[key];
  }
  return total;
}

/**
 * Pulls groups with inline samples (as Arrow with `format: "arrow"`, one part file per pull),
 * appends every sample not already in the file or folder (fsynced), then
 * acks the lease. Anything that fails before the ack leaves the lease to expire, so the groups are
 * delivered again and nothing is lost; the file's keys make the redelivery write nothing twice.
 * A pull with an unreadable record is written but not acked. Ctrl-C stops after the current pull.
 */
export async function runDrain(
  options: DrainOptions,
  client: ApiClient,
  out: Output,
): Promise<ExitCode> {
  const arrow = options.format === "arrow";
  const jsonl = arrow ? undefined : SampleFile.open(options.out);
  const parts = arrow ? SampleArrowDir.open(options.out) : undefined;
  const file: SampleSink = (jsonl ?? parts)!;
  if (file.repairedBytes > 0)
    out.note(
      `${options.out}: removed ${arrow ? "a partial part" : "a partial last line"} (${file.repairedBytes} bytes) left by an interrupted drain; its samples were not acked and will be delivered again`,
    );
  if (file.existing > 0)
    out.note(
      `${options.out}: already holds ${file.existing} samples; appending, skipping any of them delivered again`,
    );
  const interrupts = new InterruptWatch();
  const summary: DrainSummary = {
    ok: true,
    out: options.out,
    stopped: "empty",
    pulls: 0,
    groups: 0,
    samples_pulled: 0,
    samples_written: 0,
    duplicates_skipped: 0,
    samples_in_file: file.existing,
    acked_leases: 0,
    expired_leases: 0,
    unacked_leases: 0,
    record_errors: [],
    dropped_groups: [],
    feed: zeroBatchCounts(),
  };
  const dropped = new Map<string, DroppedGroup>();
  const selector = options.batch ? batchSelector(options.batch) : {};
  let idleSince: number | null = null;
  try {
    while (!interrupts.signal.aborted) {
      if (options.maxGroups !== undefined && summary.groups >= options.maxGroups) {
        summary.stopped = "max_groups";
        break;
      }
      const want = Math.min(
        options.perPull,
        options.maxGroups === undefined ? options.perPull : options.maxGroups - summary.groups,
      );
      const body = {
        max_groups: want,
        lease_ms: options.leaseMs,
        inline: true,
        ...selector,
        ...(options.trainingMode ? { training_mode: options.trainingMode } : {}),
        ...(options.minPolicyVersion === undefined
          ? {}
          : { min_policy_version: options.minPolicyVersion }),
      };
      const pulled = parts
        ? await pullArrow(client, body, parts)
        : await pullJsonl(client, body, jsonl!);
      summary.pulls += 1;
      for (const group of pulled.dropped)
        if (!dropped.has(group.uid)) dropped.set(group.uid, group);
      if (pulled.lease_id === null || pulled.groups.length === 0) {
        const waiting = await waitingGroups(client, options.batch);
        if (!options.follow && waiting.pending_groups === 0 && waiting.ready_groups === 0) break;
        idleSince ??= Date.now();
        if (!options.follow && Date.now() - idleSince >= options.waitMs) {
          summary.stopped = "waited";
          break;
        }
        await sleep(options.intervalMs, interrupts.signal);
        continue;
      }
      idleSince = null;
      const members = pulled.groups.flatMap((group) => group.members);
      const written = pulled.write();
      summary.samples_pulled += pulled.samples;
      summary.samples_written += written.written;
      summary.duplicates_skipped += written.skipped;
      summary.groups += pulled.groups.length;
      const broken = members.filter((member) => member.record_error !== undefined);
      if (broken.length > 0) {
        summary.record_errors.push(
          ...broken.map((member) => ({
            rollout_id: member.rollout_id,
            error: member.record_error!,
          })),
        );
        summary.unacked_leases += 1;
        continue;
      }
      const acked = await client.request(
        "POST",
        "/v1/feed/ack",
        { lease_id: pulled.lease_id },
        [409],
      );
      if (acked.status === 409) summary.expired_leases += 1;
      else summary.acked_leases += 1;
      out.note(
        `pulled ${pulled.groups.length} groups: wrote ${written.written} samples${written.skipped ? `, skipped ${written.skipped} already in the file` : ""}`,
      );
    }
    if (interrupts.signal.aborted) summary.stopped = "interrupted";
  } finally {
    interrupts.dispose();
    file.close();
  }
  summary.dropped_groups = [...dropped.values()];
  summary.feed = await waitingGroups(client, options.batch);
  summary.samples_in_file = file.existing + summary.samples_written;
  summary.ok = summary.record_errors.length === 0 && summary.stopped !== "interrupted";
  out.result(summary, () => formatDrainSummary(summary));
  if (summary.stopped === "interrupted") return ExitCode.interrupted;
  return summary.record_errors.length > 0 ? ExitCode.failure : ExitCode.ok;
}
