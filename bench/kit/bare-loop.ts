/** @module The baseline: a bare Node loop making the same multi-turn calls with the `openai` client. */
import OpenAI from "openai";
import { SYSTEM_PROMPT } from "./chat-calls";

/** What each simulated rollout does: `steps` sequential calls over a growing conversation. */
export interface LoopShape {
  rollouts: number;
  steps: number;
  maxTokens: number;
  concurrency: number;
}

/** Runs the baseline; returns how many calls completed. No storage, no retries, no token checks. */
export async function runBareLoop(
  baseUrl: string,
  model: string,
  shape: LoopShape,
): Promise<number> {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: "none", maxRetries: 0 });
  let calls = 0;
  let next = 0;
  const oneRollout = async (index: number) => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: `Tell me about topic ${index}.` },
    ];
    for (let step = 0; step < shape.steps; step++) {
      const completion = await client.chat.completions.create({
        model,
        messages,
        max_tokens: shape.maxTokens,
        temperature: 1,
        top_p: 1,
        logprobs: true,
        top_logprobs: 0,
        // vLLM's extension, sent as the framework sends it.
        ...({ return_token_ids: true } as object),
      });
      calls++;
      messages.push({ role: "assistant", content: completion.choices[0]?.message.content ?? "" });
      messages.push({ role: "user", content: `Go on (${step + 2}/${shape.steps}).` });
    }
  };
  const worker = async () => {
    while (next < shape.rollouts) await oneRollout(next++);
  };
  await Promise.all(Array.from({ length: Math.min(shape.concurrency, shape.rollouts) }, worker));
  return calls;
}
