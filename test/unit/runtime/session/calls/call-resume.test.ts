/** Unit: how a restarted session goes on with a call its restart cut (resumptionOf, resumeCutCalls) and the key a retry without a call id must match (requestKey). */
import { describe, expect, it } from "vitest";
import { notInterruptibleBecause } from "../../../../../src/gateway/interruptible";
import type { ProgressCadence } from "../../../../../src/gateway/stream-progress";
import type {
  CallFlights,
  KeptFlight,
} from "../../../../../src/runtime/session/calls/call-flights";
import {
  requestKey,
  resumeCutCalls,
  resumptionOf,
} from "../../../../../src/runtime/session/calls/call-resume";
import { ReattachableCalls } from "../../../../../src/runtime/session/calls/reattach";
import type { GatewayCallResult } from "../../../../../src/runtime/session/calls/gateway-call";

const CADENCE: ProgressCadence = { tokens: 128, ms: 2_000 };

const CHAT_BODY = {
  model: "m",
  messages: [{ role: "user", content: "count to a thousand" }],
  stream: true,
};

/** A streamed plain chat call cut after keeping two batches (256 tokens), never restarted before. */
function flight(overrides: Partial<KeptFlight> = {}): KeptFlight {
  return {
    callId: "r-1/gw/call-1",
    startedAt: 1_000,
    request: {
      path: "/chat/completions",
      body: CHAT_BODY,
      meta: { callId: "r-1/gw/call-1", attempt: null, purpose: "policy" },
    },
    payloads: [
      '{"choices":[{"delta":{"content":"1"}}]}',
      '{"choices":[{"delta":{"content":"2"}}]}',
    ],
    keptTokens: 256,
    runs: [
      { from_token: 0, policy_version: 4 },
      { from_token: 100, policy_version: 5 },
    ],
    interrupted: 1,
    restarts: 0,
    ...overrides,
  };
}

describe("resumptionOf", () => {
  it("resumes a plain streamed chat call that kept tokens from its token ids, seeded with what it kept", () => {
    const cut = flight();
    expect(resumptionOf(cut, CADENCE)).toEqual({
      seed: { payloads: cut.payloads, runs: cut.runs, interrupted: 1 },
      note: {
        restarts: 1,
        resumed: "token_ids",
        kept_tokens: 256,
        regenerated_tokens_max: 128,
        reason: null,
      },
    });
  });

  it("bounds the tokens generated again by the cadence times the restarts", () => {
    const { note } = resumptionOf(flight({ restarts: 2 }), { tokens: 32, ms: 500 });
    expect(note.restarts).toBe(3);
    expect(note.regenerated_tokens_max).toBe(32 * 3);
  });

  it("counts restarts on from the flight's own count", () => {
    expect(resumptionOf(flight({ restarts: 0 }), CADENCE).note.restarts).toBe(1);
    expect(resumptionOf(flight({ restarts: 4 }), CADENCE).note.restarts).toBe(5);
    const whole = flight({ restarts: 1, keptTokens: 0, payloads: [], runs: null });
    expect(resumptionOf(whole, CADENCE).note.restarts).toBe(2);
  });

  it("runs a call with tools again whole, naming tools as the reason", () => {
    const body = {
      ...CHAT_BODY,
      tools: [{ type: "function", function: { name: "calculate", parameters: {} } }],
    };
    const cut = flight({ request: { ...flight().request, body } });
    const reason = notInterruptibleBecause("/chat/completions", body);
    expect(reason).toBe("tools");
    expect(resumptionOf(cut, CADENCE)).toEqual({
      seed: null,
      note: {
        restarts: 1,
        resumed: "whole",
        kept_tokens: 0,
        regenerated_tokens_max: null,
        reason: "tools",
      },
    });
  });

  it("resumes a call with an empty tools list from its ids, as a plain call", () => {
    const cut = flight({ request: { ...flight().request, body: { ...CHAT_BODY, tools: [] } } });
    expect(resumptionOf(cut, CADENCE).note.resumed).toBe("token_ids");
  });

  it("runs a text completion again whole, with the reason interruptible.ts gives", () => {
    const cut = flight({
      request: { ...flight().request, path: "/completions", body: { prompt: "hi", stream: true } },
    });
    const { seed, note } = resumptionOf(cut, CADENCE);
    expect(seed).toBeNull();
    expect(note.resumed).toBe("whole");
    expect(note.reason).toBe(notInterruptibleBecause("/completions", { prompt: "hi" }));
  });

  it("runs a harness turn again whole, as one reply", () => {
    const request = flight().request;
    const cut = flight({ request: { ...request, meta: { ...request.meta, turns: true } } });
    const { seed, note } = resumptionOf(cut, CADENCE);
    expect(seed).toBeNull();
    expect(note).toMatchObject({ resumed: "whole", kept_tokens: 0, regenerated_tokens_max: null });
    expect(note.reason).toBe("a harness turn is answered as one reply");
  });

  it("runs a call that kept no tokens again whole: nothing was kept before the restart", () => {
    const cut = flight({ keptTokens: 0, payloads: [], runs: null, interrupted: 0 });
    expect(resumptionOf(cut, CADENCE)).toEqual({
      seed: null,
      note: {
        restarts: 1,
        resumed: "whole",
        kept_tokens: 0,
        regenerated_tokens_max: null,
        reason: "nothing was kept before the restart",
      },
    });
  });
});

describe("requestKey", () => {
  it("is the same for the same path and body, and differs when the body or the path does", () => {
    const key = requestKey("/chat/completions", CHAT_BODY);
    expect(requestKey("/chat/completions", { ...CHAT_BODY })).toBe(key);
    expect(requestKey("/chat/completions", { ...CHAT_BODY, temperature: 0.5 })).not.toBe(key);
    expect(
      requestKey("/chat/completions", { ...CHAT_BODY, messages: [{ role: "user", content: "x" }] }),
    ).not.toBe(key);
    expect(requestKey("/completions", CHAT_BODY)).not.toBe(key);
  });
});

describe("resumeCutCalls", () => {
  it("ends the flights already recorded, and runs on and holds the others for their callers", async () => {
    const recorded = flight({ callId: "r-1/gw/recorded" });
    const cut = flight({ callId: "r-1/gw/cut" });
    const ended: string[] = [];
    const restarted: Array<[string, boolean]> = [];
    const ran: string[] = [];
    const kept: Array<Promise<unknown>> = [];
    const reattach = new ReattachableCalls();
    const flights = {
      cut: (running: ReadonlySet<string>) => {
        expect(running.has("r-1/gw/mine")).toBe(true);
        return [recorded, cut];
      },
      end: (callId: string) => void ended.push(callId),
      restarted: (callId: string, keepChunks: boolean) => void restarted.push([callId, keepChunks]),
    } as unknown as CallFlights;
    const resumed = resumeCutCalls({
      flights,
      running: new Set(["r-1/gw/mine"]),
      recorded: (callId) => callId === recorded.callId,
      run: (which, resumption): Promise<GatewayCallResult> => {
        ran.push(which.callId);
        expect(resumption.note.resumed).toBe("token_ids");
        return Promise.resolve({ ok: true, json: "resumed answer" });
      },
      reattach,
      keepAlive: (work) => void kept.push(work),
      cadence: CADENCE,
    });
    expect(resumed).toBe(1);
    expect(ended).toEqual(["r-1/gw/recorded"]);
    expect(restarted).toEqual([["r-1/gw/cut", true]]);
    expect(ran).toEqual(["r-1/gw/cut"]);
    expect(kept).toHaveLength(1);
    await Promise.all(kept);
    // The caller that comes back with the same request, but no call id, finds the answer.
    const key = requestKey(cut.request.path, cut.request.body);
    expect(await reattach.claim(null, key)).toEqual({ ok: true, json: "resumed answer" });
  });

  it("drops the kept chunks of a call it runs again whole", () => {
    const restarted: Array<[string, boolean]> = [];
    const flights = {
      cut: () => [flight({ keptTokens: 0, payloads: [], runs: null })],
      end: () => undefined,
      restarted: (callId: string, keepChunks: boolean) => void restarted.push([callId, keepChunks]),
    } as unknown as CallFlights;
    const resumed = resumeCutCalls({
      flights,
      running: new Set(),
      recorded: () => false,
      run: (_, resumption) => {
        expect(resumption.seed).toBeNull();
        return Promise.resolve({ ok: true, json: "{}" });
      },
      reattach: new ReattachableCalls(),
      keepAlive: () => undefined,
      cadence: CADENCE,
    });
    expect(resumed).toBe(1);
    expect(restarted).toEqual([["r-1/gw/call-1", false]]);
  });
});
