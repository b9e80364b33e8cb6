/**
 * @module The text of the context tokens a token strip shows (prompt, tool results, template
 * glue), which the engine never sends with a call. Asked of the server that answered the call,
 * when a page is rendered, never on the rollout's own calls: one `/detokenize` + `/tokenize` pair
 * per training sample, for the sample's last call, whose prompt holds every context token before
 * it. Recorded calls never change, so answers are kept per isolate (bounded).
 */
import type { LlmCall } from "../../src/schemas/llm-call";
import type { TrainingSample } from "../../src/schemas/training-sample";
import { fetchTokenTexts, replicaUrls } from "../../src/gateway/backends";

/** Texts by call id: one per id of that call's `prompt_token_ids`. */
export type PromptTexts = ReadonlyMap<string, readonly string[]>;

const CACHE_LIMIT = 256;
/** Per request: a page waits at most twice this for a server that hangs (then shows ids). */
const REQUEST_TIMEOUT_MS = 2_000;
/** call id → its prompt's token texts (null: the server could not say; not asked again). */
const cache = new Map<string, string[] | null>();

function remember(key: string, texts: string[] | null): void {
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, texts);
}

/** The call whose prompt covers all of a sample's context tokens: its last one. */
function lastCallOf(
  sample: TrainingSample,
  calls: ReadonlyMap<string, LlmCall>,
): LlmCall | undefined {
  const ids = Array.isArray(sample.extra_fields.calls)
    ? (sample.extra_fields.calls as string[])
    : [];
  return calls.get(ids[ids.length - 1] ?? "");
}

/**
 * The prompt token texts of each sample's last call, from its replica (the deployment's
 * `LLM_API_KEY` is sent only to the deployment's own server). Calls the server cannot answer for
 * are left out: their strip shows ids.
 */
export async function contextTexts(
  samples: readonly TrainingSample[],
  calls: ReadonlyMap<string, LlmCall>,
  server: { baseUrl: string | undefined; apiKey: string | undefined },
  fetcher: typeof fetch = fetch,
): Promise<PromptTexts> {
  const own = server.baseUrl ? replicaUrls(server.baseUrl).root : null;
  const wanted = samples
    .map((sample) => lastCallOf(sample, calls))
    .filter((call): call is LlmCall => call !== undefined && call.prompt_token_ids.length > 0);
  const out = new Map<string, readonly string[]>();
  await Promise.all(
    wanted.map(async (call) => {
      const root = replicaUrls(call.replica).root;
      const key = `${root} ${call.call_id}`;
      if (!cache.has(key)) {
        const model = typeof call.request.model === "string" ? call.request.model : undefined;
        remember(
          key,
          await fetchTokenTexts(
            fetcher,
            {
              root,
              model,
              apiKey: root === own ? server.apiKey : undefined,
              timeoutMs: REQUEST_TIMEOUT_MS,
            },
            call.prompt_token_ids,
          ),
        );
      }
      const texts = cache.get(key);
      if (texts) out.set(call.call_id, texts);
    }),
  );
  return out;
}
