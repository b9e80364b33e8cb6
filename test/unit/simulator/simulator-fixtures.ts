/** Shared helpers for the vLLM simulator tests: the calculator tool and small HTTP readers. */

/** The calculator tool the script knows how to call. */
export const CALCULATOR_TOOL = {
  type: "function",
  function: {
    name: "calculate",
    description: "Evaluate an arithmetic expression.",
    parameters: {
      type: "object",
      properties: { expression: { type: "string" } },
      required: ["expression"],
    },
  },
} as const;

/** A parsed JSON reply (status and body; body is `undefined` when not JSON). */
export interface JsonReply {
  status: number;
  body: any;
}

/** POSTs JSON (with any extra headers) and reads the JSON reply. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonReply> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed };
}

/** POSTs JSON to a streaming endpoint and returns the raw `data:` payloads in order. */
export async function postSse(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<string[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return text
    .split("\n\n")
    .filter((event) => event.startsWith("data: "))
    .map((event) => event.slice("data: ".length));
}

/** The JSON chunks of a stream (everything before `[DONE]`). */
export function jsonChunks(events: string[]): any[] {
  return events.filter((event) => event !== "[DONE]").map((event) => JSON.parse(event) as unknown);
}
