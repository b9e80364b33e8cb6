/**
 * Integration: a fuzz pass over every route of the real Worker in workerd (issue 10). The routes
 * are read from the app itself, so a route added later is fuzzed too. Each gets malformed,
 * oversized, deeply nested and wrongly typed bodies, seeded random JSON, odd ids and odd query
 * strings; no answer may be a 5xx, and every non-2xx must be `application/problem+json`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../functions/app";
import "../fixtures/test-agents";
import { createExternal, type ExternalRollout } from "../fixtures/external-rollouts";
import { api } from "../fixtures/rollouts";
import { createRng } from "../../src/testing/vllm-simulator/rng";

/** Ids that are malformed, hostile or merely unusual, for every `:param` of a route. */
const ODD_IDS = [".", "..", "%2E%2E", "%00", "a%2Fb", "x".repeat(300), "%C3%BC", "a:b:c"];

/** Field names the API uses, so random objects hit real schemas with wrong types. */
const FIELDS = ["agent", "task", "problem", "config", "rollout_id", "group", "uid", "group_size", "events", "messages", "reward", "rows", "n", "batch_id",
  "training_mode", "data_manager", "max_groups", "max_samples", "lease_ms", "inline", "lease_id", "policy_version", "wait_ms", "backend", "model",
  "sampling", "temperature", "max_tokens", "stream", "prompt", "kind", "name", "value", "group_timeout_ms", "extra_args", "termination_reason", "dataset_key"];

function randomJson(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth <= 0 || pick < 0.45) {
    const scalars = [null, true, false, 0, -1, 1.5, 2 ** 53, -(2 ** 31), 1e308, "", "x", "verl/hybird", "ü🙂", "a".repeat(1 + Math.floor(random() * 300)), ".."];
    return scalars[Math.floor(random() * scalars.length)];
  }
  if (pick < 0.65) return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth - 1));
  const entries = Array.from({ length: 1 + Math.floor(random() * 5) }, () => [FIELDS[Math.floor(random() * FIELDS.length)]!, randomJson(random, depth - 1)]);
  return Object.fromEntries(entries);
}

/** Bodies every route with a body gets: not JSON, empty, scalars, wrong types, deep. */
function fixedBodies(): Array<string> {
  const wrongTypes = Object.fromEntries(FIELDS.map((field, i) => [field, [42, "s", [], {}, true, null][i % 6]]));
  return [
    "{oops", "", "null", "[]", "\"text\"", "{\"a\":1}{\"b\":2}",
    JSON.stringify(wrongTypes),
    `{"agent":"external","task":{"problem":"p","extra_args":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}}`,
    `${"{\"a\":".repeat(3000)}1${"}".repeat(3000)}`,
  ];
}

/** Oversized bodies (2.2 MB, past every JSON limit but the batch route's and the gateway's). */
function oversizedBodies(): Array<string> {
  return [
    JSON.stringify({ agent: "external", task: { problem: "p".repeat(2_200_000) } }),
    JSON.stringify({ events: [{ kind: "annotation", name: "n", value: "v".repeat(2_200_000) }], messages: [{ role: "user", content: "m".repeat(10) }] }),
  ];
}

/**
 * The routes that get the oversized bodies: one per way a body is read (parseJsonBody at its
 * default limit, at the gateway's and at the batch route's larger ones, and Hono's form parser).
 * Every route reads its body through one of these, so sending 2.2 MB to each of ~25 routes would
 * test the same code 25 times for about a minute of CI.
 */
const OVERSIZED_ROUTES = new Set(["POST /v1/rollouts/:id/finish", "POST /v1/rollouts/:id/events", "POST /v1/rollouts/:id/llm/v1/chat/completions", "POST /v1/batches", "POST /login"]);

interface Outcome {
  route: string;
  status: number;
  contentType: string | null;
}

async function send(method: string, path: string, body: string | undefined, headers: Record<string, string> = {}): Promise<Outcome> {
  // A redirect is the route's answer (the dashboard's form posts end in 303): following it would
  // fuzz the page it points at instead, and render a whole dashboard page per request.
  const response = await api(path, { method, body, headers, redirect: "manual" });
  const outcome = { route: `${method} ${path.slice(0, 80)}`, status: response.status, contentType: response.headers.get("content-type") };
  await response.body?.cancel();
  return outcome;
}

/** Every route the app registers (middleware entries left out). */
const ROUTES = createApp().routes.filter((r) => r.method !== "ALL").map((r) => ({ method: r.method, path: r.path }));
const outcomes: Outcome[] = [];
let live: ExternalRollout;
const rng = createRng(1010);
const random = () => rng.next();

describe("fuzzing every route (integration)", () => {
  beforeAll(async () => {
    live = await createExternal();
  });

  afterAll(() => {
    console.log(`fuzz: ${outcomes.length} requests over ${ROUTES.length} routes; 5xx: ${outcomes.filter((o) => o.status >= 500).length}`);
  });

  it("finds every route of the app", () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(20);
  });

  it.each(ROUTES)("never answers 5xx on $method $path, and every non-2xx is problem+json", async (route) => {
    const seen: Outcome[] = [];
    const hasBody = route.method === "POST" || route.method === "PUT";
    const fill = (id: string) => route.path.replace(/:[a-z_]+/g, id);
    const targets = route.path.includes(":") ? [fill(live.rollout_id), ...ODD_IDS.map(fill)] : [route.path];
    const auth = { authorization: `Bearer ${live.llm.api_key}` };
    for (const target of targets) seen.push(await send(route.method, target, hasBody ? "{}" : undefined, auth));
    for (const query of ["?offset=-1&limit=abc", "?after=xyz&limit=1e9"]) seen.push(await send(route.method, `${targets[0]}${query}`, hasBody ? "{}" : undefined));
    seen.push(await send(route.method, targets[0]!, hasBody ? "{}" : undefined, { "last-event-id": "not-a-number", "x-edge-rollout-attempt": "0", ...auth }));
    if (hasBody) {
      for (const body of fixedBodies()) seen.push(await send(route.method, targets[0]!, body, auth));
      if (OVERSIZED_ROUTES.has(`${route.method} ${route.path}`)) for (const body of oversizedBodies()) seen.push(await send(route.method, targets[0]!, body, auth));
      for (let i = 0; i < 6; i++) seen.push(await send(route.method, targets[0]!, JSON.stringify(randomJson(random, 4)), auth));
    }
    outcomes.push(...seen);
    expect(seen.filter((o) => o.status >= 500)).toEqual([]);
    // 3xx is a redirect (a form post's answer), not an error: every other non-2xx must be problem+json.
    expect(seen.filter((o) => (o.status < 200 || o.status >= 400) && o.contentType !== "application/problem+json")).toEqual([]);
  }, 120_000);

  it("sends the oversized bodies to routes the app has, one per way a body is read", () => {
    const registered = new Set(ROUTES.map((route) => `${route.method} ${route.path}`));
    expect([...OVERSIZED_ROUTES].filter((route) => !registered.has(route))).toEqual([]);
  });
});
