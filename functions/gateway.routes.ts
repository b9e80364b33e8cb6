/** @module A rollout's own OpenAI-compatible endpoint: `/v1/rollouts/:id/llm/v1/*`, keyed per rollout. */
import { Hono, type Context } from "hono";
import { ConflictError, InvalidInputError, LimitExceededError, NotFoundError, UnauthorizedError } from "../src/errors";
import type { GatewayCall } from "../src/gateway/gateway";
import type { UpstreamPath } from "../src/gateway/model-backend";
import { checkRolloutKey } from "../src/gateway/rollout-keys";
import { storeWhileReleasing } from "../src/gateway/store-while-releasing";
import { GatewayChatRequest, GatewayCompletionRequest } from "../src/schemas/gateway-requests";
import type { JsonObject } from "../src/schemas/json";
import type { PolicyAdmission } from "../src/schemas/policy";
import { ATTEMPT_HEADER, CallPurpose, PURPOSE_HEADER, type LlmCall } from "../src/schemas/llm-call";
import { RolloutId } from "../src/schemas/rollout-api";
import { type AppEnv, gatewaySecret } from "./env";
import { gatewayFor } from "./gateway-deps";
import { parseJsonBody } from "./middleware/problem-details";
import { policyPort, policyStub } from "./policy-stub";
import { type SessionRpc, sessionStub } from "./session-stub";

type GatewayContext = Context<{ Bindings: AppEnv }>;

/** Checks `Authorization: Bearer <rollout key>` for the rollout in the path: 401 forged/missing, 403 another rollout's. */
async function authorize(c: GatewayContext): Promise<string> {
  const parsed = RolloutId.safeParse(c.req.param("id"));
  if (!parsed.success) throw new NotFoundError("no such rollout");
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) throw new UnauthorizedError("missing Authorization: Bearer <rollout api_key>", 401);
  const verdict = await checkRolloutKey(gatewaySecret(c.env), match[1]!, parsed.data);
  if (verdict === "invalid") throw new UnauthorizedError("invalid rollout api_key", 401);
  if (verdict === "other_rollout") throw new UnauthorizedError("this api_key belongs to another rollout", 403);
  return parsed.data;
}

/** The session's admission for a call: its limits and replica, or 404/409. */
async function admit(stub: SessionRpc, rolloutId: string, runnerAttempt: number | undefined): Promise<Omit<GatewayCall, "whileSyncing" | "callId">> {
  const admitted = await stub.admitCall(runnerAttempt);
  if (!admitted.ok) {
    if (admitted.reason === "not_found") throw new NotFoundError(`rollout ${rolloutId} does not exist`);
    if (admitted.reason === "superseded") throw new ConflictError(`attempt ${runnerAttempt} of rollout ${rolloutId} is no longer live (its lease expired or it was handed back); stop this attempt`);
    throw new ConflictError(`rollout ${rolloutId} has ended (${admitted.status}); its gateway accepts no more calls`);
  }
  return { rolloutId, stepId: null, train: admitted.train, model: admitted.model, limits: admitted.limits, replicaHint: admitted.replica_hint, admissionTtlMs: admitted.call_ttl_ms };
}

/** The runner attempt in the path (`/v1/rollouts/:id/attempts/:attempt/llm/v1`), if the call came that way. */
function pathAttemptOf(c: GatewayContext): number | undefined {
  const raw = c.req.param("attempt");
  if (raw === undefined) return undefined;
  const attempt = Number(raw);
  if (!Number.isInteger(attempt) || attempt < 1) throw new NotFoundError(`no attempt ${raw} of this rollout`);
  return attempt;
}

/** The attempt a call belongs to: the path's, else what an in-Worker attempt's fetch declares in its header; null when neither. */
function attemptOf(c: GatewayContext): number | null {
  const fromPath = pathAttemptOf(c);
  if (fromPath !== undefined) return fromPath;
  const raw = c.req.header(ATTEMPT_HEADER);
  if (raw === undefined) return null;
  const attempt = Number(raw);
  if (!Number.isInteger(attempt) || attempt < 1) throw new InvalidInputError(`${ATTEMPT_HEADER} must be an attempt number >= 1`, { status: 400 });
  return attempt;
}

/** What the call is for: `judge` when a grader's llm says so in its header, else `policy`. */
function purposeOf(c: GatewayContext): CallPurpose {
  const raw = c.req.header(PURPOSE_HEADER);
  if (raw === undefined) return "policy";
  const purpose = CallPurpose.safeParse(raw);
  if (!purpose.success) throw new InvalidInputError(`${PURPOSE_HEADER} must be one of ${CallPurpose.options.join(", ")}`, { status: 400 });
  return purpose.data;
}

/** The invocation's `waitUntil`, when there is one (the in-Worker `llm.fetch` calls the app without an execution context). */
function keepAliveOf(c: GatewayContext): ((work: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx;
    return (work) => ctx.waitUntil(work);
  } catch {
    return undefined;
  }
}

/**
 * Each rollout's admission ttl (its lease ttl, fixed by its config), kept for the isolate's life
 * so that a rollout's later calls ask the session and the admission shard at the same time instead
 * of one after the other. Plain numbers, safe across requests; bounded, oldest dropped first.
 */
const admissionTtls = new Map<string, number>();
const MAX_REMEMBERED_TTLS = 10_000;

function rememberTtl(rolloutId: string, ttlMs: number | undefined): void {
  if (ttlMs === undefined || admissionTtls.get(rolloutId) === ttlMs) return;
  admissionTtls.set(rolloutId, ttlMs);
  if (admissionTtls.size > MAX_REMEMBERED_TTLS) admissionTtls.delete(admissionTtls.keys().next().value!);
}

/**
 * The session's admission and, when the rollout's ttl is known, the shard's admission asked for
 * alongside it (one round trip instead of two). The session decides first: a call it refuses
 * (404, 409) is released at its shard before the refusal is answered, so it never counts.
 */
async function admitBoth(c: GatewayContext, stub: SessionRpc, rolloutId: string, callId: string): Promise<{ session: Awaited<ReturnType<typeof admit>>; admission?: Promise<PolicyAdmission> }> {
  const ttlMs = admissionTtls.get(rolloutId);
  const port = ttlMs === undefined ? undefined : policyPort(c.env);
  const admission = port?.acquire(rolloutId, callId, ttlMs!);
  // Settled either way here, so a failed admission is never an unhandled rejection; the gateway reads it again.
  const settled = admission?.then(() => undefined, () => undefined);
  try {
    const session = await admit(stub, rolloutId, pathAttemptOf(c));
    rememberTtl(rolloutId, session.admissionTtlMs);
    return admission ? { session, admission } : { session };
  } catch (error) {
    await settled;
    if (port) await port.release(rolloutId, callId).catch(() => undefined);
    throw error;
  }
}

/** Records a call while its admission is released, under the version it was admitted with, corrected if a sync ended meanwhile. */
async function recordWhileReleasing(stub: SessionRpc, record: LlmCall, released: Promise<number>): Promise<void> {
  const { versionEnd } = await storeWhileReleasing(stub.recordCall(record), released);
  if (versionEnd !== record.policy_version_end) await stub.amendCallVersion(record.call_id, versionEnd);
}

/** Forwards one call through the gateway and records it on the rollout; ends an external rollout a limit refuses. */
async function forward(c: GatewayContext, path: UpstreamPath, body: JsonObject & { stream?: boolean }): Promise<Response> {
  const rolloutId = await authorize(c);
  const stub = sessionStub(c.env, rolloutId);
  const attempt = attemptOf(c);
  const purpose = purposeOf(c);
  const stamp = (record: LlmCall): LlmCall => ({ ...record, purpose, ...(attempt === null ? {} : { attempt }) });
  const callId = `${rolloutId}/gw/${crypto.randomUUID()}`;
  const { session, admission } = await admitBoth(c, stub, rolloutId, callId);
  const call: GatewayCall = { ...session, callId, ...(admission ? { admission } : {}), whileSyncing: "refuse", signal: c.req.raw.signal, keepAlive: keepAliveOf(c) };
  const gateway = gatewayFor(c.env);
  try {
    if (body.stream) return await gateway.stream(path, body, call, (record, released) => recordWhileReleasing(stub, stamp(record), released));
    const { reply, replyText, call: record, released } = await gateway.sendUnreleased(path, body, call);
    await recordWhileReleasing(stub, stamp(record), released);
    // The upstream's own bytes when the backend kept them: serializing the parsed reply again costs CPU for nothing.
    return replyText === undefined ? c.json(reply as JsonObject) : c.body(replyText, 200, { "content-type": "application/json" });
  } catch (error) {
    if (error instanceof LimitExceededError) await stub.endForLimit(error.reason, error.message);
    throw error;
  }
}

/**
 * Largest request body a rollout's gateway accepts: 4 MiB. A default `max_prompt_length` of
 * 131,072 tokens is ~0.5 MB of English text, but tokens of code, CJK text or JSON-escaped tool
 * output run to 10-15 bytes each (a 120k-token prompt of them is 1.8 MB), so 32 bytes per token
 * is the bound; the prompt's real length is then checked in tokens. Larger bodies would crowd the
 * 128 MB isolate that parses them while it serves other calls at the same time.
 */
export const MAX_GATEWAY_BODY_BYTES = 4 * 1024 * 1024;

/** Routes mounted at `/v1/rollouts/:id/llm/v1` and, for runner attempts, `/v1/rollouts/:id/attempts/:attempt/llm/v1`. */
export function gatewayRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();
  routes.post("/chat/completions", async (c) => forward(c, "/chat/completions", (await parseJsonBody(c, GatewayChatRequest, { maxBytes: MAX_GATEWAY_BODY_BYTES })) as JsonObject));
  routes.post("/completions", async (c) => forward(c, "/completions", (await parseJsonBody(c, GatewayCompletionRequest, { maxBytes: MAX_GATEWAY_BODY_BYTES })) as JsonObject));
  routes.get("/models", async (c) => {
    await authorize(c);
    const model = (await policyStub(c.env).fence()).snapshot.model ?? c.env.LLM_MODEL;
    return c.json({ object: "list", data: [{ id: model, object: "model", created: 0, owned_by: "edge-rollout" }] });
  });
  return routes;
}
