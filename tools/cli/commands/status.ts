/** @module `edge-rollout status [BATCH]`: one batch's progress, or the trainer feed and the policy. */
import type { PolicyView } from "../../../src/schemas/policy";
import type { BatchProgress } from "../../../src/schemas/batch";
import type { FeedStats } from "../../../src/schemas/feed";
import type { ApiClient } from "../api-client";
import { readBatch } from "../batch-watch";
import { formatCounts, formatDuration, formatFields, formatNumber, formatTable } from "../format";
import type { Output } from "../output";

function iso(ms: number | null): string {
  return ms === null ? "-" : new Date(ms).toISOString();
}

/** A batch's progress as text. */
export function formatBatch(progress: BatchProgress): string {
  const { counts } = progress;
  const took =
    progress.finished_at === null
      ? `running for ${formatDuration(Date.now() - progress.created_at)}`
      : `took ${formatDuration(progress.finished_at - progress.created_at)}`;
  return formatFields([
    [
      "batch",
      `${progress.batch_id} (agent ${progress.agent}, mode ${progress.mode}, training_mode ${progress.training_mode}, data_manager ${progress.data_manager})`,
    ],
    ["status", `${progress.status}${progress.done ? " (done)" : ""}`],
    [
      "rollouts",
      `${progress.rollouts} = ${progress.rows} rows × n=${progress.n}; released ${progress.released}, in flight ${progress.in_flight} (max ${progress.max_concurrent})`,
    ],
    [
      "counts",
      `succeeded ${counts.succeeded}, failed ${counts.failed}, cancelled ${counts.cancelled}, running ${counts.running}, queued ${counts.queued}, not released ${counts.not_released}`,
    ],
    ["reward", `mean ${formatNumber(progress.reward.mean)} over ${progress.reward.count}`],
    ["termination", formatCounts(progress.termination_reasons as Record<string, number>)],
    ["source", progress.dataset_key ?? "inline rows"],
    ["created", `${iso(progress.created_at)}, ${took}`],
  ]);
}

/** The feed's counters and the policy as text. */
export function formatFeedAndPolicy(
  stats: FeedStats & { policy_version: number },
  policy: PolicyView,
): string {
  const backend =
    policy.backend === null
      ? "deployment default (LLM_BASE_URL)"
      : JSON.stringify({ ...policy.backend, api_key: policy.backend.api_key ? "***" : undefined });
  const sync = policy.syncing ? `syncing (${JSON.stringify(policy.syncing)})` : "no";
  const lines = [
    formatFields([
      [
        "policy",
        `version ${policy.policy_version}, model ${policy.model ?? "deployment default (LLM_MODEL)"}`,
      ],
      ["backend", backend],
      ["sampling", `temperature ${policy.sampling.temperature}, top_p ${policy.sampling.top_p}`],
      ["syncing", `${sync}; ${policy.in_flight} model calls in flight`],
      [
        "resources",
        policy.resources.length === 0
          ? "-"
          : policy.resources.map((r) => `${r.name}@${r.version}`).join(", "),
      ],
      [
        "feed",
        `ready ${stats.ready_groups}, pending ${stats.pending_groups}, leased ${stats.leased_groups} groups; ${stats.active_leases} active leases`,
      ],
      [
        "totals",
        `ingested ${stats.ingested}, delivered ${stats.delivered}, acked ${stats.acked}, duplicates ${stats.duplicates}, late ${stats.late}, dropped stale ${stats.dropped_stale}, partial ${stats.partial_released}, lease expired ${stats.lease_expired}`,
      ],
      [
        "group timeout",
        stats.config.group_timeout_ms === null
          ? "none (groups wait to be complete)"
          : formatDuration(stats.config.group_timeout_ms),
      ],
    ]),
  ];
  const modes = Object.entries(stats.by_training_mode);
  if (modes.length > 0) {
    const header = [
      "training_mode",
      "ready",
      "pending",
      "leased",
      "ingested",
      "acked",
      "dropped_stale",
    ];
    lines.push(
      "",
      formatTable([
        header,
        ...modes.map(([mode, c]) => [
          mode,
          c.ready_groups,
          c.pending_groups,
          c.leased_groups,
          c.ingested,
          c.acked,
          c.dropped_stale,
        ]),
      ]),
    );
  }
  return lines.join("\n");
}

/** Prints a batch's progress, or without a batch the feed stats and the policy. Exit 0 when read. */
export async function runStatus(
  batchId: string | undefined,
  client: ApiClient,
  out: Output,
): Promise<0> {
  if (batchId !== undefined) {
    const progress = await readBatch(client, batchId);
    out.result(progress, () => formatBatch(progress));
    return 0;
  }
  const [feed, policy] = await Promise.all([
    client.get<FeedStats & { policy_version: number }>("/v1/feed/stats"),
    client.get<PolicyView>("/v1/policy"),
  ]);
  out.result({ feed, policy }, () => formatFeedAndPolicy(feed, policy));
  return 0;
}
