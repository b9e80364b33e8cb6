/**
 * @module bench:engine's workload: streamed chat calls through the real `openai` client, each with
 * its own ~2k-token prompt (no prefix shared between calls, so every sequence holds its own KV
 * blocks) and `ignore_eos` to a fixed length, as vLLM's own serving benchmarks ask for.
 */
import OpenAI from "openai";

/** One call's shape. */
export interface WorkloadShape {
  /** Words in each call's own system prompt (about one token each with Qwen3). */
  promptWords: number;
  /** Tokens each call generates (`max_tokens` with `ignore_eos`). */
  outputTokens: number;
}

/** What one call produced. */
export interface CallResult {
  key: string | null;
  ids: number[];
}

/** Common words that Qwen3's tokenizer keeps whole (one token each, with their leading space). */
const WORDS = (
  "the of and to in is for on with as by at from that this it be are was were an or not but " +
  "have has had can will would should could may might must do does did make made take took " +
  "give gave find found know knew think thought see saw come came go went get got use used " +
  "work worked call called try tried ask asked need needed feel felt become became leave left " +
  "put keep kept let begin began seem seemed help helped show showed hear heard play played run"
).split(" ");

/** A system prompt of about `words` tokens whose first block no other call's shares (so no prefix is). */
function ownPrompt(index: number, words: number): string {
  const parts: string[] = [`Call number ${index} begins here.`];
  for (let i = 1; i < words; i++) parts.push(WORDS[(index * 31 + i * 17) % WORDS.length]!);
  return parts.join(" ");
}

/**
 * Runs `count` calls with at most `concurrency` in flight; call `i` carries sample key
 * `${keyPrefix}${i}` (null prefix: unkeyed). Answers each call's token ids, in call order.
 */
export async function runCalls(
  baseUrl: string,
  shape: WorkloadShape,
  count: number,
  concurrency: number,
  keyPrefix: string | null,
  promptOffset = 0,
): Promise<CallResult[]> {
  const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: "unused", maxRetries: 0 });
  const results: CallResult[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const key = keyPrefix === null ? null : `${keyPrefix}${i}`;
      const stream = await client.chat.completions.create(
        {
          model: "sim-qwen3",
          messages: [
            { role: "system", content: ownPrompt(promptOffset + i, shape.promptWords) },
            { role: "user", content: "Write at length." },
          ],
          max_tokens: shape.outputTokens,
          stream: true,
          // vLLM's extra sampling parameters, passed through in the body as vLLM's docs show.
          ...({ ignore_eos: true, return_token_ids: true } as object),
        },
        key === null ? {} : { headers: { "x-sample-key": key } },
      );
      const ids: number[] = [];
      for await (const chunk of stream) {
        const choice = chunk.choices[0] as { token_ids?: number[] | null } | undefined;
        if (choice?.token_ids) ids.push(...choice.token_ids);
      }
      results[i] = { key, ids };
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}
