/**
 * Integration: a fuzz pass over every route of the real Worker in workerd (issues 10, 27). The
 * routes are read from the app itself, so a route added later is fuzzed too. Each path parameter
 * gets a valid value of its own type (a live rollout, a claimed attempt, a batch, a resource name
 * and version), so every route gets past its path checks to its body parser; then malformed,
 * oversized, deeply nested and wrongly typed bodies, seeded random JSON, odd ids and odd query
 * strings. No answer may be a 5xx, every non-2xx must be `application/problem+json`, and nothing
 * may log an error while or after answering (queue consumers and alarms run on after the answer).
 * The routes are fuzzed without API_TOKEN and again with it set.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp } from "../../../functions/app";
import { appIdOfKey } from "../../../src/online";
import { seriesOf } from "../../../src/schemas/batch-listing";
import type { ClaimedRollout } from "../../../src/schemas/runner-claims";
import "../../fixtures/test-agents";
import { createExternal, type ExternalRollout } from "../../fixtures/external-rollouts";
import { api, waitFor } from "../../fixtures/rollouts";
import { claim, externalBatch, uniqueAgent } from "../../fixtures/runner-claims";
import { chat, createApp as createOnlineApp, serveVersions } from "../online/online-fixtures";
import { createRng } from "../../../tools/simulator/rng";

/** Ids that are malformed, hostile or merely unusual, for every `:param` of a route. */
const ODD_IDS = [".", "..", "%2E%2E", "%00", "a%2Fb", "x".repeat(300), "%C3%BC", "a:b:c"];

/** Field names the API uses, so random objects hit real schemas with wrong types. */
const FIELDS = [
  "agent",
  "task",
  "problem",
  "config",
  "rollout_id",
  "group",
  "uid",
  "group_size",
  "events",
  "messages",
  "reward",
  "rows",
  "n",
  "batch_id",
  "training_mode",
  "data_manager",
  "max_groups",
  "max_samples",
  "lease_ms",
  "inline",
  "lease_id",
  "policy_version",
  "wait_ms",
  "backend",
  "model",
  "sampling",
  "temperature",
  "max_tokens",
  "stream",
  "prompt",
  "kind",
  "name",
  "value",
  "group_timeout_ms",
  "extra_args",
  "termination_reason",
  "dataset_key",
];

function randomJson(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth <= 0 || pick < 0.45) {
    const scalars = [
      null,
      true,
      false,
      0,
      -1,
      1.5,
      2 ** 53,
      -(2 ** 31),
      1e308,
      "",
      "x",
      "verl/hybird",
      "ü🙂",
      "a".repeat(1 + Math.floor(random() * 300)),
      "..",
    ];
    return scalars[Math.floor(random() * scalars.length)];
  }
  if (pick < 0.65)
    return Array.from({ length: Math.floor(random() * 4) }, () => randomJson(random, depth - 1));
  const entries = Array.from({ length: 1 + Math.floor(random() * 5) }, () => [
    FIELDS[Math.floor(random() * FIELDS.length)]!,
    randomJson(random, depth - 1),
  ]);
  return Object.fromEntries(entries);
}

/** Bodies every route with a body gets: not JSON, empty, scalars, wrong types, deep. */
function fixedBodies(): Array<string> {
  const wrongTypes = Object.fromEntries(
    FIELDS.map((field, i) => [field, [42, "s", [], {}, true, null][i % 6]]),
  );
  return [
    "{oops",
    "",
    "null",
    "[]",
    '"text"',
    '{"a":1}{"b":2}',
    JSON.stringify(wrongTypes),
    `{"agent":"external","task":{"problem":"p","extra_args":{"x":${"[".repeat(5000)}${"]".repeat(5000)}}}}`,
    `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`,
  ];
}

/** Oversized bodies (2.2 MB, past every JSON limit but the batch route's and the gateway's). */
function oversizedBodies(): Array<string> {
  return [
    JSON.stringify({ agent: "external", task: { problem: "p".repeat(2_200_000) } }),
    JSON.stringify({
      events: [{ kind: "annotation", name: "n", value: "v".repeat(2_200_000) }],
      messages: [{ role: "user", content: "m".repeat(10) }],
    }),
  ];
}

/**
 * The routes that get the oversized bodies: one per way a body is read (parseJsonBody at its
 * default limit, at the gateway's and at the batch route's larger ones, and Hono's form parser).
 * Every route reads its body through one of these, so sending 2.2 MB to each of ~25 routes would
 * test the same code 25 times for about a minute of CI.
 */
const OVERSIZED_ROUTES = new Set([
  "POST /v1/rollouts/:id/finish",
  "POST /v1/rollouts/:id/events",
  "POST /v1/rollouts/:id/llm/v1/chat/completions",
  "POST /v1/batches",
  "POST /login",
]);

interface Outcome {
  route: string;
  status: number;
  contentType: string | null;
}

/** Valid values for every kind of path parameter the app has, made in beforeAll. */
interface Valid {
  rollout: ExternalRollout;
  claimed: ClaimedRollout;
  batchId: string;
  /** An application key of online serving, and a conversation of its application. */
  appKey: string;
  onlineSession: string;
}

/** Online serving's routes an application key opens (functions/credentials/route-credentials.ts). */
const APP_KEY_ROUTE = /^\/v1\/online\/(chat\/completions|models|sessions)/;

/** A valid value for each `:param` of `path`, by what it names there; throws for a parameter this test does not know yet. */
function fillValid(path: string, valid: Valid): string {
  const batchRoute = /^\/(v1\/)?batches\//.test(path);
  const attemptRoute = path.includes("/attempts/:attempt");
  // Feedback needs a conversation that exists; the session's own route gets one that does not,
  // so fuzzing its DELETE leaves the feedback route's conversation in place for the other mode.
  if (/^\/v1\/online\/sessions\/:id\/feedback$/.test(path))
    return path.replace(":id", valid.onlineSession);
  return path.replace(/:([a-z_]+)/g, (_, name: string) => {
    if (name === "id")
      return batchRoute
        ? valid.batchId
        : attemptRoute
          ? valid.claimed.rollout_id
          : valid.rollout.rollout_id;
    if (name === "attempt") return String(valid.claimed.attempt);
    if (name === "name") return RESOURCE;
    if (name === "version") return "1";
    // A group of the valid batch (`<batch_id>:<row>`), and the series that batch is listed under.
    if (name === "uid") return encodeURIComponent(`${valid.batchId}:0`);
    if (name === "series") return encodeURIComponent(seriesOf(valid.batchId));
    // The dashboard's online pages: the application the valid key belongs to.
    if (name === "app") return appIdOfKey(valid.appKey)!;
    throw new Error(`no valid value for :${name} in ${path}: teach fillValid this parameter`);
  });
}

const TOKEN = "fuzz-api-token";
const RESOURCE = "fuzz-resource";
const app = createApp();
/** Every route the app registers (middleware entries left out). */
const ROUTES = app.routes
  .filter((r) => r.method !== "ALL")
  .map((r) => ({ method: r.method, path: r.path }));
/** Routes whose POST reads no JSON body: the login form (a form parser), and actions that take none. */
const NO_JSON_BODY = new Set([
  "POST /login",
  "POST /logout",
  "POST /v1/rollouts/:id/cancel",
  "POST /v1/batches/:id/cancel",
  "POST /batches/:id/cancel",
  "POST /v1/policy/sync/abort",
]);
/** The gateway's Anthropic Messages and OpenAI Responses routes answer errors in their API's own JSON shape (an SDK reads them), not problem+json. */
const API_SHAPED =
  /(\/llm\/v1\/(messages|messages\/count_tokens|responses)|\/v1\/online\/(chat\/completions|models))$/;
/** The dashboard's login form answers a refused login with the form again (401 text/html), for a browser. */
const HTML_FORM = "POST /login";

/** Sends through the Worker as deployed (no API_TOKEN), or through the app with API_TOKEN set. */
async function send(
  withToken: boolean,
  method: string,
  path: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<Response> {
  // A redirect is the route's answer (the dashboard's form posts end in 303): following it would
  // fuzz the page it points at instead, and render a whole dashboard page per request.
  const init: RequestInit = { method, body, headers, redirect: "manual" };
  if (!withToken) return api(path, init);
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`http://w${path}`, init),
    { ...env, API_TOKEN: TOKEN },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

async function outcome(response: Response, method: string, path: string): Promise<Outcome> {
  await response.body?.cancel();
  return {
    route: `${method} ${path.slice(0, 80)}`,
    status: response.status,
    contentType: response.headers.get("content-type"),
  };
}

const outcomes: Outcome[] = [];
/** `<mode> <METHOD> <path>` of every route fuzzed, to compare with the app's route table at the end. */
const fuzzed = new Set<string>();
const logged: string[] = [];
let valid: Valid;
const rng = createRng(1010);
const random = () => rng.next();

beforeAll(async () => {
  // Errors logged anywhere in the Worker's isolate: routes, Durable Objects, queue consumers, alarms.
  vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    logged.push(
      args
        .map((a) => (a instanceof Error ? a.stack : typeof a === "string" ? a : JSON.stringify(a)))
        .join(" "),
    );
  });
  // And promises the Worker left to fail on their own (waitUntil work, stream pumps).
  addEventListener("unhandledrejection", (event) => {
    logged.push(
      `unhandled rejection: ${event.reason instanceof Error ? event.reason.stack : String(event.reason)}`,
    );
  });
  const agent = uniqueAgent("fuzz");
  const batchId = await externalBatch(agent, 1, 1);
  const claimed = await waitFor(
    "a claimable attempt",
    async () => (await claim("fuzz-runner", agent))[0],
    20_000,
  );
  const rollout = await createExternal();
  const put = await api(`/v1/resources/${RESOURCE}`, {
    method: "PUT",
    body: JSON.stringify({ prompt: "fuzz" }),
  });
  expect(put.status).toBe(201);
  // Online serving: an application, a version served from the test simulator, one conversation.
  const onlineApp = await createOnlineApp();
  await serveVersions({ "3": 1 });
  await chat(onlineApp.api_key, "fuzz-conversation");
  valid = {
    rollout,
    claimed,
    batchId,
    appKey: onlineApp.api_key,
    onlineSession: "fuzz-conversation",
  };
});

afterAll(() => {
  vi.restoreAllMocks();
  console.log(
    `fuzz: ${outcomes.length} requests over ${ROUTES.length} routes; 5xx: ${outcomes.filter((o) => o.status >= 500).length}`,
  );
});

describe.each([
  { mode: "without API_TOKEN", withToken: false },
  { mode: "with API_TOKEN set", withToken: true },
])("fuzzing every route $mode (integration)", ({ withToken }) => {
  it("has a valid value for every path parameter of every route the app has", () => {
    expect(ROUTES.map((route) => `${route.method} ${fillValid(route.path, valid)}`)).toHaveLength(
      app.routes.filter((r) => r.method !== "ALL").length,
    );
  });

  it.each(ROUTES)(
    "never answers 5xx on $method $path, every non-2xx is problem+json, and a body reaches its parser",
    async (route) => {
      const seen: Outcome[] = [];
      fuzzed.add(`${withToken} ${route.method} ${route.path}`);
      const hasBody = route.method === "POST" || route.method === "PUT";
      const target = fillValid(route.path, valid);
      const ownKey = APP_KEY_ROUTE.test(route.path);
      const key = ownKey
        ? valid.appKey
        : route.path.includes("/attempts/:attempt")
          ? valid.claimed.llm.api_key
          : valid.rollout.llm.api_key;
      // The gateway takes the rollout's own key and online serving the application's; with
      // API_TOKEN set every other route takes that token.
      const auth: Record<string, string> = {
        authorization: `Bearer ${withToken && !ownKey && !/\/llm\//.test(route.path) ? TOKEN : key}`,
        ...(ownKey ? { "x-edge-rollout-session": valid.onlineSession } : {}),
      };
      const go = async (
        path: string,
        body: string | undefined,
        headers: Record<string, string> = auth,
      ) =>
        seen.push(
          await outcome(
            await send(withToken, route.method, path, body, headers),
            route.method,
            path,
          ),
        );
      if (hasBody && !NO_JSON_BODY.has(`${route.method} ${route.path}`)) {
        // Past the path checks with valid values, a body that is not JSON must meet the JSON parser.
        const response = await send(withToken, route.method, target, "{oops", auth);
        const body = (await response.json()) as { detail?: string; error?: { message?: string } };
        expect([
          response.status,
          API_SHAPED.test(route.path) ? body.error?.message : body.detail,
        ]).toEqual([400, "request body is not valid JSON"]);
      }
      const odd = withToken
        ? []
        : ODD_IDS.map((id) => route.path.replace(/:[a-z_]+/g, id)).filter(
            (path) => path !== route.path,
          );
      for (const path of [target, ...odd]) await go(path, hasBody ? "{}" : undefined);
      for (const query of ["?offset=-1&limit=abc", "?after=xyz&limit=1e9"])
        await go(`${target}${query}`, hasBody ? "{}" : undefined, {});
      await go(target, hasBody ? "{}" : undefined, {
        "last-event-id": "not-a-number",
        "x-edge-rollout-attempt": "0",
        ...auth,
      });
      if (hasBody) {
        for (const body of fixedBodies()) await go(target, body);
        if (OVERSIZED_ROUTES.has(`${route.method} ${route.path}`))
          for (const body of oversizedBodies()) await go(target, body);
        for (let i = 0; i < (withToken ? 2 : 6); i++)
          await go(target, JSON.stringify(randomJson(random, 4)));
      }
      outcomes.push(...seen);
      expect(seen.filter((o) => o.status >= 500)).toEqual([]);
      // 3xx is a redirect (a form post's answer), not an error: every other non-2xx must be problem+json.
      const problem = (o: Outcome) =>
        o.contentType === "application/problem+json" ||
        (API_SHAPED.test(route.path) && o.contentType === "application/json") ||
        (`${route.method} ${route.path}` === HTML_FORM &&
          o.status === 401 &&
          o.contentType?.startsWith("text/html"));
      expect(seen.filter((o) => (o.status < 200 || o.status >= 400) && !problem(o))).toEqual([]);
    },
    120_000,
  );
});

describe("after the fuzz (integration)", () => {
  it("fuzzed exactly the app's routes, in both modes", () => {
    const appRoutes = app.routes
      .filter((r) => r.method !== "ALL")
      .map((r) => `${r.method} ${r.path}`);
    expect([...fuzzed].sort()).toEqual(
      [...appRoutes.map((r) => `false ${r}`), ...appRoutes.map((r) => `true ${r}`)].sort(),
    );
  });

  it("sends the oversized bodies to routes the app has, one per way a body is read", () => {
    const registered = new Set(ROUTES.map((route) => `${route.method} ${route.path}`));
    expect([...OVERSIZED_ROUTES].filter((route) => !registered.has(route))).toEqual([]);
  });

  it("logs no error while answering or afterwards, in queue consumers or alarms", async () => {
    // The consumers and alarms the fuzz set off run after their answers: give them time to run.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(logged).toEqual([]);
  });
});
