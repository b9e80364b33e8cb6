/** @module Reaching a rollout's Durable Object by rollout id. */
import type { FinishRolloutRequest, RolloutSpec, RolloutView } from "../src/schemas/rollout-api";
import type { LlmCall } from "../src/schemas/llm-call";
import type { Span, SpanInput } from "../src/schemas/span";
import type { SessionHandle, SessionLocator } from "../src/runtime/session/session-handle";
import type { RequestDriveResult } from "../src/runtime/session/session-drive";
import type { AdmitCallResult, AttemptEndResult, ClaimResult, CreateResult, FinishResult, GatewayWriteResult, HeartbeatResult } from "../src/runtime/session/session-results";
import type { AppEnv } from "./env";

/**
 * The RPC surface of a RolloutSession stub, spelled out: the generic `DurableObjectStub<T>` types
 * are too deep for the compiler on view-sized return types.
 */
export interface SessionRpc extends SessionHandle {
  create(spec: RolloutSpec): Promise<CreateResult>;
  cancel(): Promise<FinishResult>;
  read(): Promise<RolloutView | undefined>;
  subscribe(afterStepIndex: number): Promise<ReadableStream<Uint8Array> | undefined>;
  admitCall(attempt?: number): Promise<AdmitCallResult>;
  requestDrive(): Promise<RequestDriveResult>;
  recordCall(call: LlmCall): Promise<GatewayWriteResult>;
  addEvents(events: SpanInput[]): Promise<{ ok: true; spans: Span[] } | Exclude<GatewayWriteResult, { ok: true }>>;
  finishExternal(input: FinishRolloutRequest): Promise<FinishResult | Exclude<GatewayWriteResult, { ok: true }>>;
  endForLimit(reason: "MAX_PROMPT_LENGTH" | "MAX_RESPONSE_LENGTH", message: string): Promise<void>;
  claim(runnerId: string, leaseMs: number): Promise<ClaimResult>;
  heartbeat(attempt: number, runnerId: string, leaseMs: number): Promise<HeartbeatResult>;
  finishAttempt(attempt: number, runnerId: string, input: FinishRolloutRequest): Promise<AttemptEndResult>;
  releaseAttempt(attempt: number, runnerId: string, reason: "shutdown" | "crashed", error: string | null): Promise<AttemptEndResult>;
}

/** The RolloutSession stub for `rolloutId` (one object per rollout, named by its id). */
export function sessionStub(env: AppEnv, rolloutId: string): SessionRpc {
  const namespace = env.ROLLOUT_SESSION;
  return namespace.get(namespace.idFromName(rolloutId)) as unknown as SessionRpc;
}

/** A locator the driver uses; the stub's RPC methods are the SessionHandle. */
export function sessionLocator(env: AppEnv): SessionLocator {
  return { get: (rolloutId) => sessionStub(env, rolloutId) };
}
