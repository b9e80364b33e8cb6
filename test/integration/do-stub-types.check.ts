/**
 * Compile-time checks of the Durable Object stub types, run by `npm run typecheck` (tsconfig.test.json):
 * each stub type is the RPC surface of its class, so a method changed on the class changes what
 * callers of the stub must pass, and a hand-written surface that drifted would not compile.
 */
import type { AdmissionShard } from "../../durable-objects/admission-shard";
import type { BatchCatalog } from "../../durable-objects/batch-catalog";
import type { BatchTracker } from "../../durable-objects/batch-tracker";
import type { ClaimQueue } from "../../durable-objects/claim-queue";
import type { PolicyStore } from "../../durable-objects/policy-store";
import type { RolloutSession } from "../../durable-objects/rollout-session";
import type { TrainerFeed } from "../../durable-objects/trainer-feed";
import type { BatchRpc } from "../../functions/batch-stub";
import type { CatalogRpc } from "../../functions/catalog-stub";
import type { ClaimQueueRpc } from "../../functions/claim-stub";
import type { FeedRpc } from "../../functions/feed-stub";
import type { AdmissionShardRpc, PolicyRpc } from "../../functions/policy-stub";
import type { SessionRpc } from "../../functions/session-stub";
import type { RpcSurface } from "../../src/rpc-surface";
import type { SessionHandle } from "../../src/runtime/session/session-handle";
import type { LlmCall, LlmCallInput } from "../../src/schemas/llm-call";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

/** Every stub type is exactly its class's surface. */
export type StubsAreDerived = [
  Assert<Equal<SessionRpc, RpcSurface<RolloutSession>>>,
  Assert<Equal<PolicyRpc, RpcSurface<PolicyStore>>>,
  Assert<Equal<AdmissionShardRpc, RpcSurface<AdmissionShard>>>,
  Assert<Equal<FeedRpc, RpcSurface<TrainerFeed>>>,
  Assert<Equal<BatchRpc, RpcSurface<BatchTracker>>>,
  Assert<Equal<CatalogRpc, RpcSurface<BatchCatalog>>>,
  Assert<Equal<ClaimQueueRpc, RpcSurface<ClaimQueue>>>,
];

/** A stub method takes what the class method takes and promises what it returns (the drift once found: recordCall). */
export type RecordCallMatches = [
  Assert<Equal<Parameters<SessionRpc["recordCall"]>, Parameters<RolloutSession["recordCall"]>>>,
  Assert<Equal<Parameters<SessionRpc["recordCall"]>[0], LlmCallInput>>,
  Assert<Equal<ReturnType<SessionRpc["read"]>, Promise<ReturnType<RolloutSession["read"]>>>>,
];

/** The session stub is a SessionHandle: the driver can use it as is. */
export const sessionIsHandle = (stub: SessionRpc): SessionHandle => stub;

/** The surface leaves the runtime's handlers out: a stub offers no `alarm` or `fetch` to call. */
export type HandlersLeftOut = [Assert<Equal<"alarm" extends keyof SessionRpc ? true : false, false>>, Assert<Equal<"fetch" extends keyof FeedRpc ? true : false, false>>];

// A hand-written surface that drifted from the class does not pass for it.
// @ts-expect-error recordCall of the class takes an LlmCallInput, not only a full LlmCall
export type DriftedIsRefused = Assert<Equal<{ recordCall(call: LlmCall): ReturnType<SessionRpc["recordCall"]> }, Pick<SessionRpc, "recordCall">>>;
