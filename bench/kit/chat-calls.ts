/**
 * @module The chat calls paths (a) and (b) make: short multi-turn conversations shaped like the
 * `dialogue` agent's (same system prompt, same follow-ups), each call timed by the caller.
 */
import OpenAI from "openai";

/** Where one conversation sends its calls: an OpenAI base URL (ending in `/v1`) and key. */
export interface ChatEndpoint {
  baseURL: string;
  apiKey: string;
  /** Sent with every call (the serving path's `x-edge-rollout-session`). */
  headers?: Record<string, string>;
}

/** How many conversations, how long, and how many at once. */
export interface ConversationPlan {
  conversations: number;
  turns: number;
  maxTokens: number;
  /** Conversations in flight at once (each makes its calls one after another). */
  concurrency: number;
  /** Topic of the first conversation; conversation i asks about topic `firstTopic + i`. */
  firstTopic: number;
  /** Sent as `seed`: the simulator then answers the same prompt the same way on every path. */
  seed?: number;
}

/** Per-call start times and latencies (ms, as the caller saw them), completion tokens, and the phase's wall time. */
export interface CallTimings {
  startMs: number[];
  latencyMs: number[];
  /** Each call's turn in its conversation (1 = its first call). */
  turn: number[];
  completionTokens: number[];
  wallMs: number;
}

/** The dialogue agent's system prompt, so every path sends the same kind of conversation. */
export const SYSTEM_PROMPT = "You are a helpful assistant. Keep answers short.";

/** Runs `plan.conversations` conversations against `endpointFor(i)`; throws on the first failed call. */
export async function runConversations(
  endpointFor: (index: number) => ChatEndpoint,
  plan: ConversationPlan,
): Promise<CallTimings> {
  const startMs: number[] = [];
  const latencyMs: number[] = [];
  const turnOf: number[] = [];
  const completionTokens: number[] = [];
  let next = 0;
  const conversation = async (index: number) => {
    const { headers, ...endpoint } = endpointFor(index);
    // maxRetries 0: a retried call would hide a failure inside a latency sample.
    const client = new OpenAI({
      ...endpoint,
      defaultHeaders: headers,
      maxRetries: 0,
      timeout: 30_000,
    });
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: `Tell me about topic ${plan.firstTopic + index}.` },
    ];
    for (let turn = 1; turn <= plan.turns; turn++) {
      const start = performance.now();
      const completion = await client.chat.completions.create({
        model: "sim-qwen3",
        messages,
        max_tokens: plan.maxTokens,
        temperature: 1,
        top_p: 1,
        logprobs: true,
        top_logprobs: 0,
        ...(plan.seed === undefined ? {} : { seed: plan.seed }),
        // vLLM's extension: token ids of prompt and completion, as the gateway always asks.
        ...({ return_token_ids: true } as object),
      });
      startMs.push(start);
      latencyMs.push(performance.now() - start);
      turnOf.push(turn);
      completionTokens.push(completion.usage?.completion_tokens ?? 0);
      messages.push({ role: "assistant", content: completion.choices[0]?.message.content ?? "" });
      if (turn < plan.turns)
        messages.push({ role: "user", content: `Go on (${turn + 1}/${plan.turns}).` });
    }
  };
  const worker = async () => {
    while (next < plan.conversations) await conversation(next++);
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(plan.concurrency, plan.conversations) }, worker));
  return {
    startMs,
    latencyMs,
    turn: turnOf,
    completionTokens,
    wallMs: performance.now() - start,
  };
}
