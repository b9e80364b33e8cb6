/** @module How a verl dataset row becomes the AgentTask of each of its rollouts. */
import { AgentTask, withoutGroundTruth } from "../../schemas/agent-task";
import type { DatasetRow } from "../../schemas/batch";
import { messageText, type ChatMessage } from "../../schemas/chat";
import type { JsonObject, JsonValue } from "../../schemas/json";

/** Columns of a verl RL row that map to task fields; any other column is passed through. */
const KNOWN_COLUMNS = new Set([
  "prompt",
  "data_source",
  "ability",
  "reward_model",
  "extra_info",
  "agent_name",
]);

/** A task ready to be sampled, with the agent that runs it. */
export interface RowTask {
  agent: string;
  task: AgentTask;
}

/** The row's task, or the row field that prevents one. */
export type RowTaskResult =
  ({ ok: true } & RowTask) | { ok: false; field: string; message: string };

/** The row's chat, a bare-string prompt read as one user message. */
export function promptMessages(row: DatasetRow): ChatMessage[] {
  return typeof row.prompt === "string" ? [{ role: "user", content: row.prompt }] : row.prompt;
}

function indexOf(row: DatasetRow, rowIndex: number): string {
  const index = row.extra_info.index;
  return typeof index === "number" || (typeof index === "string" && index !== "")
    ? String(index)
    : String(rowIndex);
}

/**
 * Maps one row: `problem` is the text of the last user message (the whole chat stays in
 * `extra_args.prompt` for agents that want it), `ground_truth` is `reward_model.ground_truth`,
 * `task_id` and `prompt_id` are `extra_info.index` (else the row index), and `extra_args` also
 * carries `data_source`, `ability`, `reward_model` (without its `ground_truth`: the label is for
 * the grader alone), `extra_info` and every unknown column, so
 * agent knobs can ride along as extra columns. The agent is `agent_name`, else `batchAgent`.
 */
export function rowToTask(row: DatasetRow, rowIndex: number, batchAgent: string): RowTaskResult {
  const messages = promptMessages(row);
  const lastUser = [...messages].reverse().find((message) => message.role === "user");
  if (!lastUser)
    return { ok: false, field: "prompt", message: "prompt must contain a user message" };
  const problem = messageText(lastUser);
  if (problem.trim() === "")
    return { ok: false, field: "prompt", message: "the last user message has no text" };
  const unknownColumns = Object.fromEntries(
    Object.entries(row).filter(([key]) => !KNOWN_COLUMNS.has(key)),
  ) as JsonObject;
  const agent = row.agent_name ?? batchAgent;
  const id = indexOf(row, rowIndex);
  const extraArgs: Record<string, JsonValue> = {
    ...unknownColumns,
    prompt: messages as unknown as JsonValue,
    data_source: row.data_source,
    ability: row.ability,
    // The label goes to `ground_truth` only (graders and environments); agents see extra_args.
    reward_model: withoutGroundTruth({ reward_model: row.reward_model as JsonObject })
      .reward_model!,
    extra_info: row.extra_info,
  };
  const task = AgentTask.safeParse({
    task_id: id,
    sample_id: 0,
    agent_name: agent,
    problem,
    ground_truth: row.reward_model.ground_truth,
    prompt_id: id,
    extra_args: extraArgs,
  });
  if (!task.success) {
    const issue = task.error.issues[0];
    return {
      ok: false,
      field: issue?.path.map(String).join(".") || "(row)",
      message: issue?.message ?? "invalid row",
    };
  }
  return { ok: true, agent, task: task.data };
}
