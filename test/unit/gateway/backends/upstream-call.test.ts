import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelError } from "../../../../src/errors";
import {
  postUpstreamJson,
  postUpstreamReply,
  sendUpstream,
} from "../../../../src/gateway/backends/upstream-call";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";

const CHAT = { messages: [{ role: "user", content: "What is 2 + 3?" }], max_tokens: 32 };

/** A scripted upstream: answers every request with `reply` and remembers the last request's headers. */
async function startUpstream(reply: {
  status: number;
  headers?: Record<string, string>;
  body: string;
}) {
  const seen: { headers?: IncomingHttpHeaders } = {};
  const server: Server = createServer((req, res) => {
    seen.headers = req.headers;
    req
      .resume()
      .on("end", () =>
        res
          .writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
          .end(reply.body),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("postUpstreamJson", () => {
  let sim: VllmSimulator;
  let chatUrl: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 5 });
    chatUrl = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("returns the parsed reply of a successful call", async () => {
    const reply = (await postUpstreamJson(fetch, chatUrl, CHAT, {})) as {
      object: string;
      choices: unknown[];
    };
    expect(reply.object).toBe("chat.completion");
    expect(reply.choices).toHaveLength(1);
  });

  it("hands back the reply's text exactly as the server sent it, next to the parsed body", async () => {
    const text = '{"object":"chat.completion",  "choices":[],"id":"x-1"}\n';
    const upstream = await startUpstream({ status: 200, body: text });
    try {
      const reply = await postUpstreamReply(fetch, `${upstream.url}/v1/chat/completions`, CHAT, {});
      expect(reply.text).toBe(text);
      expect(reply.body).toEqual({ object: "chat.completion", choices: [], id: "x-1" });
    } finally {
      await upstream.close();
    }
  });

  it("maps a 4xx to a non-retryable error carrying the upstream message", async () => {
    const error = await failure(
      postUpstreamJson(fetch, chatUrl, { ...CHAT, model: "no-such-model" }, {}),
    );
    expect(error).toMatchObject({ retryable: false, upstreamStatus: 404, status: 502 });
    expect(error.message).toContain("The model `no-such-model` does not exist.");
  });

  it("maps 5xx, 429 and malformed bodies to retryable errors", async () => {
    for (const faults of [{ rate5xx: 1 }, { rate429: 1 }, { rateMalformed: 1 }]) {
      sim.configure({ faults });
      const error = await failure(postUpstreamJson(fetch, chatUrl, CHAT, {}));
      sim.configure({ faults: { rate5xx: 0, rate429: 0, rateMalformed: 0 } });
      expect(error.retryable, JSON.stringify(faults)).toBe(true);
    }
  });

  it("maps an unreachable server to a retryable error and an abort to a non-retryable timeout", async () => {
    const upstream = await startUpstream({ status: 200, body: "{}" });
    await upstream.close();
    expect(await failure(postUpstreamJson(fetch, upstream.url, CHAT, {}))).toMatchObject({
      retryable: true,
      status: 502,
    });
    sim.configure({ faults: { rateTimeout: 1, hangMs: 5_000 } });
    const aborted = await failure(
      postUpstreamJson(fetch, chatUrl, CHAT, { signal: AbortSignal.timeout(50) }),
    );
    sim.configure({ faults: { rateTimeout: 0 } });
    expect(aborted).toMatchObject({ retryable: false, status: 504 });
  });

  it("reads Retry-After seconds, and leaves them null when the upstream did not say", async () => {
    const limited = await startUpstream({
      status: 503,
      headers: { "retry-after": "3" },
      body: '{"error": {"message": "overloaded"}}',
    });
    const silent = await startUpstream({ status: 503, body: '{"message": "down"}' });
    const told = await failure(postUpstreamJson(fetch, limited.url, CHAT, {}));
    const untold = await failure(postUpstreamJson(fetch, silent.url, CHAT, {}));
    await Promise.all([limited.close(), silent.close()]);
    expect(told).toMatchObject({ retryAfterSeconds: 3, upstreamStatus: 503, retryable: true });
    expect(told.message).toContain("overloaded");
    expect(untold).toMatchObject({ retryAfterSeconds: null, upstreamStatus: 503 });
    expect(untold.message).toContain("down");
  });

  it("passes the upstream's own 400 on as a 400 the caller must fix, not a 502 clients retry", async () => {
    const error = await failure(
      postUpstreamJson(fetch, chatUrl, { ...CHAT, stream_options: { include_usage: true } }, {}),
    );
    expect(error).toMatchObject({
      retryable: false,
      upstreamStatus: 400,
      status: 400,
      code: "upstream_rejected_request",
    });
    expect(error.message).toContain("Stream options can only be defined when `stream=True`.");
  });

  it("gives up a hung attempt at its own deadline as retryable, while the caller's abort stays final", async () => {
    sim.configure({ faults: { rateTimeout: 1, hangMs: 10_000 } });
    const hung = await failure(postUpstreamJson(fetch, chatUrl, CHAT, { timeoutMs: 100 }));
    const aborted = await failure(
      postUpstreamJson(fetch, chatUrl, CHAT, {
        timeoutMs: 10_000,
        signal: AbortSignal.timeout(50),
      }),
    );
    sim.configure({ faults: { rateTimeout: 0 } });
    expect(hung).toMatchObject({ retryable: true, status: 504, upstreamStatus: null });
    expect(hung.message).toContain("within 100 ms");
    expect(aborted).toMatchObject({ retryable: false, status: 504 });
  });

  it("sends JSON with a bearer token only when an api key is given", async () => {
    const upstream = await startUpstream({ status: 200, body: '{"ok": true}' });
    expect(await postUpstreamJson(fetch, upstream.url, CHAT, { apiKey: "sk-test" })).toEqual({
      ok: true,
    });
    expect(upstream.seen.headers).toMatchObject({
      authorization: "Bearer sk-test",
      "content-type": "application/json",
    });
    await postUpstreamJson(fetch, upstream.url, CHAT, {});
    expect(upstream.seen.headers?.authorization).toBeUndefined();
    await upstream.close();
  });
});

describe("sendUpstream with an attempt deadline", () => {
  it("fails a stream whose headers came but whose first byte never does, and relays a live one whole", async () => {
    const server: Server = createServer((req, res) => {
      req.resume().on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.flushHeaders();
        if (req.url === "/live") setTimeout(() => res.end("data: one\n\ndata: [DONE]\n\n"), 30);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const silent = await failure(sendUpstream(fetch, `${url}/silent`, CHAT, { timeoutMs: 150 }));
    const live = await sendUpstream(fetch, `${url}/live`, CHAT, { timeoutMs: 5_000 });
    const text = await live.text();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(silent).toMatchObject({ retryable: true, status: 504 });
    expect(silent.message).toContain("no first byte");
    expect(text).toBe("data: one\n\ndata: [DONE]\n\n");
  });
});
