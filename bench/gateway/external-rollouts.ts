/** @module External rollouts for path (b): created before the timed calls, finished and checked after. */
import type { ChatEndpoint } from "../kit/chat-calls";

/** One external rollout and its gateway endpoint (`llm.base_url`, `llm.api_key`). */
export interface ExternalRollout {
  rolloutId: string;
  endpoint: ChatEndpoint;
}

/**
 * Creates `count` external rollouts at `workerUrl`, a few at a time. Their `llm.base_url` uses
 * the origin they were created through, so rollouts created on the Worker's own socket are
 * called on it too.
 */
export async function createExternalRollouts(
  workerUrl: string,
  count: number,
  config: { max_tokens_per_call: number },
): Promise<ExternalRollout[]> {
  const created: ExternalRollout[] = [];
  for (let i = 0; i < count; i += 8) {
    const batch = Array.from({ length: Math.min(8, count - i) }, async (_, j) => {
      const response = await fetch(`${workerUrl}/v1/rollouts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          agent: "external",
          task: { problem: `Tell me about topic ${i + j}.` },
          config,
        }),
      });
      const body = (await response.json()) as {
        rollout_id?: string;
        llm?: { base_url: string; api_key: string };
        detail?: string;
      };
      if (!response.ok || !body.rollout_id || !body.llm)
        throw new Error(
          `creating an external rollout failed (${response.status}): ${body.detail ?? JSON.stringify(body)}`,
        );
      return {
        rolloutId: body.rollout_id,
        endpoint: { baseURL: body.llm.base_url, apiKey: body.llm.api_key },
      };
    });
    created.push(...(await Promise.all(batch)));
  }
  return created;
}

/** What the rollouts recorded: each call's `LlmCall.latency_ms` and `created_at`, the gateway's own timing of its upstream window. */
export interface RecordedCalls {
  callMs: number[];
  callStartMs: number[];
}

/** Finishes the rollouts and reads back the calls they recorded (each call made must be on its rollout). */
export async function finishAndReadCalls(
  workerUrl: string,
  rollouts: ExternalRollout[],
): Promise<RecordedCalls> {
  const recorded: RecordedCalls = { callMs: [], callStartMs: [] };
  for (let i = 0; i < rollouts.length; i += 8) {
    const views = await Promise.all(
      rollouts.slice(i, i + 8).map(async ({ rolloutId }) => {
        const finished = await fetch(`${workerUrl}/v1/rollouts/${rolloutId}/finish`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        if (!finished.ok)
          throw new Error(
            `finishing ${rolloutId} failed (${finished.status}): ${await finished.text()}`,
          );
        const view = await fetch(`${workerUrl}/v1/rollouts/${rolloutId}`);
        if (!view.ok) throw new Error(`reading ${rolloutId} failed (${view.status})`);
        return (await view.json()) as {
          llm_calls: Array<{ latency_ms: number; created_at: number }>;
        };
      }),
    );
    for (const view of views) {
      for (const call of view.llm_calls) {
        recorded.callMs.push(call.latency_ms);
        recorded.callStartMs.push(call.created_at);
      }
    }
  }
  return recorded;
}
