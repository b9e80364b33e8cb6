/** @module From a batch message to stored tasks: defaults, fingerprint, dataset loading, row checks. */
import type { BlobStorePort } from "../../ports";
import {
  DEFAULT_MEMBER_RETRIES,
  DEFAULT_REFILL_BUDGET,
  type BatchMessage,
  type DatasetRow,
} from "../../schemas/batch";
import { RolloutConfig } from "../../schemas/rollout-config";
import { readDataset } from "../../sink/formats/dataset-reader";
import { placementIssues } from "../../training/training-modes";
import type { AgentCatalog } from "./batch-ports";
import type { BatchIssue } from "./batch-results";
import { rowToTask, type RowTask } from "./row-task";
import { agentForkRefusal } from "../session";
import { RolloutId } from "../../schemas/rollout-id";
import { batchRolloutId } from "../../schemas/batch-rollout-id";

/** Largest stored task per row (JSON bytes): Durable Object rows are capped at 2 MB. */
export const MAX_ROW_TASK_BYTES = 1_000_000;

/** The settings a batch message implies once defaults are applied. */
export interface BatchSettings {
  config: RolloutConfig;
  data_manager: string;
}

/** `config.mode` follows the batch mode; `data_manager` defaults to `train` (train) or `infer` (val). */
export function resolveSettings(message: BatchMessage): BatchSettings {
  return {
    config: RolloutConfig.parse({ ...(message.config ?? {}), mode: message.mode }),
    data_manager: message.data_manager ?? (message.mode === "train" ? "train" : "infer"),
  };
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== "object") return value;
  const entries = Object.entries(value)
    .filter(([, field]) => field !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, field]) => [key, canonical(field)]));
}

/**
 * SHA-256 (hex) of the message with defaults applied and keys sorted: two messages that would
 * make the same rollouts hash the same. A dataset is identified by its key, not its bytes, so a
 * resubmission is answered without reading the dataset again.
 */
export async function fingerprintBatch(message: BatchMessage): Promise<string> {
  const {
    schema_version: _version,
    batch_id: _id,
    config: _config,
    data_manager: _manager,
    max_member_retries,
    on_infra_failure,
    on_stale,
    refill_budget,
    ...rest
  } = message;
  // Signal options at their defaults are left out, so a batch submitted before they existed hashes as it did.
  const signal = {
    ...(max_member_retries === DEFAULT_MEMBER_RETRIES ? {} : { max_member_retries }),
    ...(on_infra_failure === "withhold" ? {} : { on_infra_failure }),
    ...(on_stale === "drop" ? {} : { on_stale }),
    ...(refill_budget === DEFAULT_REFILL_BUDGET ? {} : { refill_budget }),
  };
  const text = JSON.stringify(canonical({ ...rest, ...signal, ...resolveSettings(message) }));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Rollouts the batch keeps in flight: its `max_concurrent`, lowered to the smallest limit an agent
 * of its rows sets for itself (Osmosis' `AgentWorkflowConfig.concurrency.max_concurrent`).
 */
export function effectiveMaxConcurrent(
  message: BatchMessage,
  tasks: readonly RowTask[],
  agents: AgentCatalog,
): number {
  let limit = message.max_concurrent;
  for (const name of new Set(tasks.map((task) => task.agent)))
    limit = Math.min(limit, agents.maxConcurrent(name) ?? limit);
  return limit;
}

/** The batch's rows: inline, or read from the dataset object (first `limit` rows either way). */
async function loadRows(
  message: BatchMessage,
  blobs: BlobStorePort,
): Promise<{ ok: true; rows: DatasetRow[] } | { ok: false; errors: BatchIssue[] }> {
  if (message.rows)
    return {
      ok: true,
      rows: message.limit === undefined ? message.rows : message.rows.slice(0, message.limit),
    };
  const key = message.dataset_key!;
  const bytes = await blobs.get(key);
  if (!bytes)
    return {
      ok: false,
      errors: [
        { path: "dataset_key", message: `no object named ${key} in the TRAJECTORIES bucket` },
      ],
    };
  return readDataset(bytes, key, message.limit === undefined ? {} : { limit: message.limit });
}

function rowIssue(inline: boolean, row: number, field: string, message: string): BatchIssue {
  if (inline) return { path: `rows.${row}.${field}`, message };
  return { path: "dataset_key", row, field, message: `row ${row}: ${field}: ${message}` };
}

/**
 * What only the loaded rows can tell about the signal options: a `target_groups` the rows can
 * give, and a filter metric every row's agent emits (`reward`, or one of its declared
 * `rewardDimensions`).
 */
function signalIssues(
  message: BatchMessage,
  tasks: readonly RowTask[],
  agents: AgentCatalog,
): BatchIssue[] {
  const issues: BatchIssue[] = [];
  if (message.target_groups !== undefined && message.target_groups > tasks.length) {
    issues.push({
      path: "target_groups",
      message: `target_groups (${message.target_groups}) must be <= the batch's rows (${tasks.length})`,
    });
  }
  const metric = message.filter?.metric;
  if (metric !== undefined && metric !== "reward") {
    for (const name of new Set(tasks.map((task) => task.agent))) {
      const declared = agents.rewardDimensions(name);
      if (declared.includes(metric)) continue;
      issues.push({
        path: "filter.metric",
        message: `agent "${name}" emits no reward dimension "${metric}" (declared: ${["reward", ...declared].join(", ")})`,
      });
      break;
    }
  }
  return issues;
}

/**
 * What a `tree` needs beyond its shape: agents that can fork (stepwise, on the stepwise engine),
 * a last branch step below `config.max_steps` (a child branching there would end at once), and
 * slot ids that fit the rollout-id bound at the deepest node's last retry.
 */
function treeIssues(
  message: BatchMessage,
  tasks: readonly RowTask[],
  agents: AgentCatalog,
): BatchIssue[] {
  const tree = message.tree;
  if (!tree) return [];
  for (const name of new Set(tasks.map((task) => task.agent))) {
    const refusal = agentForkRefusal(name, agents.definition(name));
    if (refusal) return [{ path: "tree", message: `tree needs agents that can fork: ${refusal}` }];
  }
  const maxSteps = resolveSettings(message).config.max_steps;
  const last = tree.branch_at.length - 1;
  if (tree.branch_at[last]! >= maxSteps)
    return [
      {
        path: `tree.branch_at.${last}`,
        message: `branch_at steps must be below config.max_steps (${maxSteps})`,
      },
    ];
  const deepest = `${batchRolloutId(message.batch_id, tasks.length - 1, message.n - 1)}${tree.branch_at.map((step) => `.t${step}-${tree.width - 1}`).join("")}.retry-${message.max_member_retries}`;
  if (!RolloutId.safeParse(deepest).success)
    return [
      {
        path: "tree",
        message: `the deepest node's rollout id (${deepest.length} characters) exceeds 200: use a shorter batch_id or fewer branch steps`,
      },
    ];
  return [];
}

/**
 * Loads the rows and maps each to its task, checking what the schema cannot: a registered
 * training mode and data manager, a user message in the prompt, a registered agent (per-row
 * `agent_name` too) and the stored size. Every bad row is
 * reported (up to 20), by `rows.<i>.<field>` inline or by row number in a dataset.
 */
export async function prepareTasks(
  message: BatchMessage,
  blobs: BlobStorePort,
  agents: AgentCatalog,
): Promise<{ ok: true; tasks: RowTask[] } | { ok: false; errors: BatchIssue[] }> {
  const placement = placementIssues({
    training_mode: message.training_mode,
    data_manager: resolveSettings(message).data_manager,
  });
  if (placement.length > 0) return { ok: false, errors: placement };
  if (!agents.has(message.agent)) {
    return {
      ok: false,
      errors: [
        {
          path: "agent",
          message: `"${message.agent}" is not registered (known: ${agents.names().join(", ")})`,
        },
      ],
    };
  }
  const loaded = await loadRows(message, blobs);
  if (!loaded.ok) return loaded;
  const inline = message.rows !== undefined;
  const tasks: RowTask[] = [];
  const errors: BatchIssue[] = [];
  const encoder = new TextEncoder();
  loaded.rows.forEach((row, index) => {
    const mapped = rowToTask(row, index, message.agent);
    if (!mapped.ok) return void errors.push(rowIssue(inline, index, mapped.field, mapped.message));
    if (!agents.has(mapped.agent))
      return void errors.push(
        rowIssue(inline, index, "agent_name", `"${mapped.agent}" is not registered`),
      );
    const bytes = encoder.encode(JSON.stringify(mapped.task)).byteLength;
    if (bytes > MAX_ROW_TASK_BYTES)
      return void errors.push(
        rowIssue(
          inline,
          index,
          "prompt",
          `the row's task is ${bytes} bytes; at most ${MAX_ROW_TASK_BYTES}`,
        ),
      );
    tasks.push({ agent: mapped.agent, task: mapped.task });
  });
  if (errors.length > 0) return { ok: false, errors: errors.slice(0, 20) };
  const signal = [...signalIssues(message, tasks, agents), ...treeIssues(message, tasks, agents)];
  if (signal.length > 0) return { ok: false, errors: signal };
  return { ok: true, tasks };
}
