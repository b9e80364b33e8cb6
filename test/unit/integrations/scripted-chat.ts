/** @module A scripted OpenAI-compatible endpoint for integration unit tests: a fetch that answers chat calls from a list. */

/** A chat request as the scripted fetch saw it. */
export interface SeenRequest {
  url: string;
  authorization: string | null;
  body: {
    model: string;
    messages: Array<Record<string, unknown>>;
    tools?: Array<{ function: { name: string } }>;
  };
}

/** The assistant's turns, in order: a tool call `{ tool, args }` or a final text. */
export type ScriptedTurn = { tool: string; args: Record<string, unknown> } | { text: string };

function completion(turn: ScriptedTurn, index: number): unknown {
  const message =
    "text" in turn
      ? { role: "assistant", content: turn.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: `call_${index}`,
              type: "function",
              function: { name: turn.tool, arguments: JSON.stringify(turn.args) },
            },
          ],
        };
  return {
    id: `chatcmpl-${index}`,
    object: "chat.completion",
    created: 0,
    model: "sim-qwen3",
    choices: [
      { index: 0, message, finish_reason: "text" in turn ? "stop" : "tool_calls", logprobs: null },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/** A fetch that answers the n-th chat call with `turns[n]` and records every request. */
export function scriptedChat(turns: ScriptedTurn[]): {
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  requests: SeenRequest[];
} {
  const requests: SeenRequest[] = [];
  return {
    requests,
    async fetch(input, init) {
      const request = new Request(input, init);
      requests.push({
        url: request.url,
        authorization: request.headers.get("authorization"),
        body: (await request.json()) as SeenRequest["body"],
      });
      const turn = turns[requests.length - 1];
      if (!turn) return Response.json({ error: { message: "script exhausted" } }, { status: 500 });
      return Response.json(completion(turn, requests.length));
    },
  };
}

/** The llm resource fields the integrations read, pointing at a rollout that does not exist. */
export const LLM = {
  base_url: "http://edge-rollout.internal/v1/rollouts/r-1/llm/v1",
  api_key: "erk.test.key",
  model: "sim-qwen3",
};
