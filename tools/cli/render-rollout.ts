/** @module A rollout for the terminal: outcome, conversation by LLM call, and the training mask (pure). */
import { messageText, type ChatMessage } from "../../src/schemas/chat";
import type { LlmCall } from "../../src/schemas/llm-call";
import type { RolloutView } from "../../src/schemas/rollout-api";
import type { TrainingSample } from "../../src/schemas/training-sample";
import { untrainableReason } from "../../src/training/sample-builder";
import { formatDuration, formatFields, formatNumber, indent, truncate } from "./format";
import { newMessages } from "../../src/sink/formats/conversation";
import { maskRuns, maskTotals } from "../../src/training/mask-display";

/** How much to print. */
export interface RenderOptions {
  /** Characters per message before it is cut. Default 400; Infinity with --full. */
  maxChars?: number;
  /** Print the token ids of the prompt and of every mask run. */
  tokens?: boolean;
}

/** One message as `[role] text`, with tool calls and reasoning on their own lines. */
export function formatMessage(message: ChatMessage, maxChars: number): string {
  const name =
    message.role === "tool" && message.tool_call_id ? `tool ${message.tool_call_id}` : message.role;
  const lines = [];
  if (message.reasoning_content)
    lines.push(`[${name} reasoning] ${truncate(message.reasoning_content, maxChars)}`);
  const text = messageText(message);
  lines.push(
    text === "" && message.tool_calls?.length
      ? `[${name}]`
      : `[${name}] ${truncate(text, maxChars)}`,
  );
  for (const call of message.tool_calls ?? [])
    lines.push(
      `  → tool call ${call.function.name}(${truncate(call.function.arguments, maxChars)}) id ${call.id}`,
    );
  return lines.join("\n");
}

/** Whether and why a call trains: `trained (mask 1)`, or the reason it is left out. */
function callTraining(call: LlmCall): string {
  const reason = untrainableReason(call);
  if (reason === null) return "trained (mask 1)";
  return reason === "abandoned_attempt"
    ? `not trained: attempt ${call.attempt} was retried`
    : `not trained: ${reason}`;
}

function formatCall(
  call: LlmCall,
  index: number,
  previous: LlmCall | undefined,
  maxChars: number,
): string {
  const { messages, whole } = newMessages(call, previous);
  const where = call.step_id
    ? ` · step ${call.step_id.split("/").at(-1)}`
    : call.attempt
      ? ` · attempt ${call.attempt}`
      : "";
  const head = `── call ${index + 1}${where} · prompt ${call.usage.prompt_tokens} tok · completion ${call.usage.completion_tokens} tok · finish ${call.finish_reason ?? "-"} · policy v${call.policy_version_start} · ${formatDuration(call.latency_ms)} · ${callTraining(call)}`;
  const body = [
    ...(whole ? ["(the prompt does not extend the previous call's; shown whole)"] : []),
    ...messages.map((m) => formatMessage(m, maxChars)),
    formatMessage(call.response_message, maxChars),
  ];
  return `${head}\n${indent(body.join("\n"), 2)}`;
}

/** What a completion said, short: its text, else the tools it called. */
function completionLabel(call: LlmCall): string {
  const text = messageText(call.response_message);
  if (text !== "") return truncate(JSON.stringify(text), 60);
  const tools = call.response_message.tool_calls?.map((tool) => tool.function.name) ?? [];
  return tools.length > 0 ? `tool call ${tools.join(", ")}` : "(empty)";
}

function ids(tokens: readonly number[]): string {
  return `[${tokens.join(", ")}]`;
}

/** One sample's mask as runs: `mask 1 ×20  call 1 completion`, `mask 0 ×12  context …`. */
export function formatSample(
  sample: TrainingSample,
  calls: ReadonlyMap<string, LlmCall>,
  options: RenderOptions = {},
): string {
  const totals = maskTotals(sample);
  const flags = Object.entries(sample.extra_fields)
    .filter(
      ([key, value]) =>
        ["trainable", "failed", "truncated", "reward_missing"].includes(key) && value !== false,
    )
    .map(([key, value]) => (value === true ? key : `${key}=${JSON.stringify(value)}`));
  const head = `sample ${sample.segment_index} (uid ${sample.uid}, sample_index ${sample.sample_index}): prompt ${totals.prompt} tokens (context, not trained), response ${sample.response_ids.length} tokens: ${totals.trained} trained (mask 1), ${totals.context} context (mask 0); reward_score ${formatNumber(sample.reward_score)}; ${sample.num_turns} turns; ${flags.join(", ") || "-"}`;
  const callIds = Array.isArray(sample.extra_fields.calls)
    ? (sample.extra_fields.calls as string[])
    : [];
  const runs = maskRuns(sample.response_mask);
  const oneRuns = runs.filter((run) => run.mask === 1).length;
  let completion = 0;
  const lines = runs.map((run) => {
    let label = "context: tool results, environment text, chat-template tokens";
    if (run.mask === 1) {
      const call = oneRuns === callIds.length ? calls.get(callIds[completion] ?? "") : undefined;
      label = call
        ? `call ${[...calls.keys()].indexOf(call.call_id) + 1} completion: ${completionLabel(call)}`
        : "model completion";
      completion += 1;
    }
    const tokenText = options.tokens
      ? `\n    ${ids(sample.response_ids.slice(run.start, run.start + run.length))}`
      : "";
    return `mask ${run.mask}  ×${String(run.length).padEnd(5)} tokens ${run.start}..${run.start + run.length - 1}  ${label}${tokenText}`;
  });
  const prompt = options.tokens ? [`prompt ids ${ids(sample.prompt_ids)}`] : [];
  return `${head}\n${indent([...prompt, ...lines].join("\n"), 2)}`;
}

/** The whole rollout: outcome, the conversation call by call, the steps, and the training samples' masks. */
export function formatRollout(
  view: RolloutView,
  samples: TrainingSample[],
  driftSplits: number,
  options: RenderOptions = {},
): string {
  const maxChars = options.maxChars ?? 400;
  const took =
    view.finished_at === null ? "not finished" : formatDuration(view.finished_at - view.created_at);
  const header = formatFields([
    ["rollout", `${view.rollout_id} (agent ${view.agent})`],
    [
      "status",
      `${view.status}${view.termination_reason ? ` · ${view.termination_reason}` : ""}${view.error ? ` · error: ${truncate(view.error, maxChars)}` : ""}`,
    ],
    ["reward", formatNumber(view.reward)],
    [
      "tokens",
      `prompt ${view.usage.prompt_tokens}, completion ${view.usage.completion_tokens} over ${view.usage.llm_calls} LLM calls; ${view.trajectory.steps.length} steps${view.attempts ? `; ${view.attempts} attempts (final ${view.final_attempt})` : ""}`,
    ],
    ["task", truncate(view.trajectory.task.problem, maxChars)],
    ["ground truth", JSON.stringify(view.trajectory.task.ground_truth)],
    [
      "time",
      `${new Date(view.created_at).toISOString()}, ${took}; published to R2: ${view.publication.status}`,
    ],
  ]);
  const calls = view.llm_calls.map((call, i) =>
    formatCall(call, i, view.llm_calls[i - 1], maxChars),
  );
  if (view.final_messages && view.llm_calls.length === 0)
    calls.push(
      `── final messages (reported by the agent)\n${indent(view.final_messages.map((m) => formatMessage(m, maxChars)).join("\n"), 2)}`,
    );
  const steps = view.trajectory.steps.map(
    (step) =>
      `step ${step.step_index}: reward ${formatNumber(step.reward)}, done ${step.done}, action ${truncate(JSON.stringify(step.action), 80)}`,
  );
  const byId = new Map(view.llm_calls.map((call) => [call.call_id, call]));
  const sampleText =
    samples.length === 0
      ? ["(no training samples: no call has token ids and logprobs)"]
      : samples.map((sample) => formatSample(sample, byId, options));
  return [
    header,
    "",
    "Conversation",
    calls.length > 0 ? calls.join("\n") : "(no LLM calls)",
    ...(steps.length > 0 ? ["", "Steps", ...steps] : []),
    "",
    `Training samples (${view.config.sample_mode}; computed from the calls by src/training/sample-builder.ts, as the sink publishes them; drift splits ${driftSplits})`,
    ...sampleText,
  ].join("\n");
}
