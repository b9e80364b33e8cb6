/**
 * RolloutClient.run: create and follow in one request, and what it does when that stream is lost.
 * A small loopback server plays the API's two routes (the real Worker's side is in
 * rollout-events.integration.test.ts); what is tested here is the client's resumption.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { RolloutClient } from "../../../scripts/rollout-client";

interface Seen {
  method: string;
  url: string;
  lastEventId: string | undefined;
  body: Record<string, unknown> | null;
}

const END = { status: "succeeded", termination_reason: "ENV_DONE", reward: 1, steps: 3 };
const frame = (event: string, data: unknown, id?: string) =>
  `${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

let server: Server | undefined;

async function readBody(request: IncomingMessage): Promise<Record<string, unknown> | null> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text === "" ? null : (JSON.parse(text) as Record<string, unknown>);
}

/** Serves `POST /v1/rollouts` with `onCreate(attempt)`'s frames (then closes), and GET …/events with the rest after Last-Event-ID. */
async function serve(onCreate: (attempt: number, id: string) => string): Promise<{
  client: RolloutClient;
  seen: Seen[];
}> {
  const seen: Seen[] = [];
  let creates = 0;
  server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const lastEventId = request.headers["last-event-id"] as string | undefined;
      seen.push({ method: request.method!, url: request.url!, lastEventId, body });
      response.writeHead(request.method === "POST" ? 202 : 200, {
        "content-type": "text/event-stream; charset=utf-8",
      });
      if (request.method === "POST") {
        response.end(onCreate(creates++, String(body!.rollout_id)));
        return;
      }
      const after = Number(lastEventId ?? -1);
      const steps = [0, 1, 2].filter((i) => i > after).map((i) => frame("step", { i }, String(i)));
      response.end(steps.join("") + frame("end", END, "end"));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { client: new RolloutClient(`http://127.0.0.1:${port}`), seen };
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe("RolloutClient.run", () => {
  it("creates with stream: true and returns the end from the same response", async () => {
    const { client, seen } = await serve(
      (_, id) =>
        frame("created", { rollout_id: id, created: true }) +
        frame("step", { i: 0 }, "0") +
        frame("end", END, "end"),
    );
    const { rolloutId, end } = await client.run({ agent: "dialogue", task: { problem: "p" } });
    expect(end).toEqual(END);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: "POST", url: "/v1/rollouts" });
    expect(seen[0]!.body).toMatchObject({ rollout_id: rolloutId, stream: true, agent: "dialogue" });
  });

  it("resumes a stream lost after the created event from its last step with GET …/events", async () => {
    const { client, seen } = await serve(
      (_, id) => frame("created", { rollout_id: id }) + frame("step", { i: 0 }, "0"),
    );
    const { rolloutId, end } = await client.run({ agent: "dialogue", task: { problem: "p" } });
    expect(end).toEqual(END);
    expect(seen.map((s) => `${s.method} ${s.url} ${s.lastEventId}`)).toEqual([
      "POST /v1/rollouts undefined",
      `GET /v1/rollouts/${rolloutId}/events 0`,
    ]);
  });

  it("sends the create again, under the same id, when the stream closed before created", async () => {
    const { client, seen } = await serve((attempt, id) =>
      attempt === 0 ? "" : frame("created", { rollout_id: id }) + frame("end", END, "end"),
    );
    const { rolloutId, end } = await client.run({ agent: "dialogue", task: { problem: "p" } });
    expect(end).toEqual(END);
    expect(seen.map((s) => s.body?.rollout_id)).toEqual([rolloutId, rolloutId]);
  });

  it("gives up after three creates that never got to created", async () => {
    const { client, seen } = await serve(() => "");
    await expect(client.run({ agent: "dialogue", task: { problem: "p" } })).rejects.toThrow(
      /kept failing before its created event/,
    );
    expect(seen).toHaveLength(3);
  });
});
