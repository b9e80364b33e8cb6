/**
 * @module One sweep point of `npm run bench:sweep`: N concurrent rollouts through edge-rollout and
 * the same N conversations through a bare `openai` loop, with the simulated latency each needed.
 */
import OpenAI from "openai";
import { SYSTEM_PROMPT } from "../kit/chat-calls";
import type { RolloutClient } from "../../scripts/rollout-client";

/** The simulator's fixed latency and the conversation shape. */
export interface SweepShape {
  rollouts: number;
  steps: number;
  maxTokens: number;
  ttftMs: number;
  perTokenMs: number;
}

/** What one side of a sweep point measured. */
export interface SideResult {
  wallMs: number;
  steps: number;
  notSucceeded: number;
  /** The longest rollout's simulated latency: Σ over its calls of ttft + per_token × completion tokens. */
  idealMs: number;
}

const simulated = (shape: SweepShape, completionTokens: number) =>
  shape.ttftMs + shape.perTokenMs * completionTokens;

/** N dialogue rollouts at once on the stack, from the first create to the last end event; `readIdealMs` reads the calls afterwards. */
export async function runOurs(
  client: RolloutClient,
  shape: SweepShape,
  topicBase: number,
): Promise<SideResult & { ids: string[]; readIdealMs: () => Promise<number> }> {
  const config = { max_steps: shape.steps, max_tokens_per_call: shape.maxTokens };
  const start = performance.now();
  const ends = await Promise.all(
    Array.from({ length: shape.rollouts }, async (_, i) => {
      const id = await client.create({
        agent: "dialogue",
        task: {
          problem: `Tell me about topic ${topicBase + i}.`,
          extra_args: { turns: shape.steps },
        },
        config,
      });
      return { id, end: await client.waitForEnd(id, 20) };
    }),
  );
  const wallMs = performance.now() - start;
  const ids = ends.map((e) => e.id);
  const readIdealMs = async () => {
    let idealMs = 0;
    for (let i = 0; i < ids.length; i += 8) {
      const views = await Promise.all(ids.slice(i, i + 8).map((id) => client.get(id)));
      for (const view of views)
        idealMs = Math.max(
          idealMs,
          view.llm_calls.reduce(
            (sum, call) => sum + simulated(shape, call.usage.completion_tokens),
            0,
          ),
        );
    }
    return idealMs;
  };
  return {
    ids,
    wallMs,
    steps: ends.reduce((n, e) => n + e.end.steps, 0),
    notSucceeded: ends.filter((e) => e.end.status !== "succeeded").length,
    idealMs: 0,
    readIdealMs,
  };
}

/** The same N conversations (multi-turn, growing history) with the `openai` client, all at once. */
export async function runBare(
  simulatorUrl: string,
  shape: SweepShape,
  topicBase: number,
): Promise<SideResult> {
  const client = new OpenAI({ baseURL: `${simulatorUrl}/v1`, apiKey: "none", maxRetries: 0 });
  let idealMs = 0;
  let steps = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: shape.rollouts }, async (_, i) => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: `Tell me about topic ${topicBase + i}.` },
      ];
      let mine = 0;
      for (let step = 0; step < shape.steps; step++) {
        const completion = await client.chat.completions.create({
          model: "sim-qwen3",
          messages,
          max_tokens: shape.maxTokens,
          logprobs: true,
          top_logprobs: 0,
          ...({ return_token_ids: true } as object),
        });
        steps++;
        mine += simulated(shape, completion.usage?.completion_tokens ?? 0);
        messages.push({ role: "assistant", content: completion.choices[0]?.message.content ?? "" });
        messages.push({ role: "user", content: `Go on (${step + 2}/${shape.steps}).` });
      }
      idealMs = Math.max(idealMs, mine);
    }),
  );
  return { wallMs: performance.now() - start, steps, notSucceeded: 0, idealMs };
}
