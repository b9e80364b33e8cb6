/**
 * Compile-time checks of the Durable Object stub types, run by `npm run typecheck` (tsconfig.test.json):
 * each stub type is the RPC surface of the interface beside its object's core, and that interface
 * is exactly its class's public methods (`implements` only checks that the class can stand for it;
 * this checks they are equal), so a method added to or changed on the class without its interface
 * does not compile, and neither does a hand-written surface that drifted.
 */
import type { AdmissionShard } from "../../../durable-objects/admission-shard";
import type { BatchCatalog } from "../../../durable-objects/batch-catalog";
import type { BatchTracker } from "../../../durable-objects/batch-tracker";
import type { ClaimQueue } from "../../../durable-objects/claim-queue";
import type { OnlineApp } from "../../../durable-objects/online-app";
import type { OnlineControl } from "../../../durable-objects/online-control";
import type { PolicyStore } from "../../../durable-objects/policy-store";
import type { RolloutSession } from "../../../durable-objects/rollout-session";
import type { TrainerFeed } from "../../../durable-objects/trainer-feed";
import type {
  AdmissionShardRpc,
  BatchRpc,
  CatalogRpc,
  ClaimQueueRpc,
  FeedRpc,
  OnlineAppRpc,
  OnlineControlRpc,
  PolicyRpc,
  SessionRpc,
} from "../../../src/runtime/objects/object-directory";
import type { DurableObjectHandler, RpcSurface } from "../../../src/rpc-surface";
import type { SessionHandle } from "../../../src/runtime/session";
import type { LlmCall, LlmCallInput } from "../../../src/schemas/llm-call";

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Assert<T extends true> = T;

/** A class's own RPC surface: its public methods, without the brand the test pool's `DurableObject` type adds. */
type ClassSurface<C> = Omit<RpcSurface<C>, "__DURABLE_OBJECT_BRAND">;

/** Every stub type is exactly its class's surface. */
export type StubsAreDerived = [
  Assert<Equal<SessionRpc, ClassSurface<RolloutSession>>>,
  Assert<Equal<PolicyRpc, ClassSurface<PolicyStore>>>,
  Assert<Equal<AdmissionShardRpc, ClassSurface<AdmissionShard>>>,
  Assert<Equal<FeedRpc, ClassSurface<TrainerFeed>>>,
  Assert<Equal<BatchRpc, ClassSurface<BatchTracker>>>,
  Assert<Equal<CatalogRpc, ClassSurface<BatchCatalog>>>,
  Assert<Equal<ClaimQueueRpc, ClassSurface<ClaimQueue>>>,
  Assert<Equal<OnlineControlRpc, ClassSurface<OnlineControl>>>,
  Assert<Equal<OnlineAppRpc, ClassSurface<OnlineApp>>>,
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
export type HandlersLeftOut = [
  Assert<Equal<DurableObjectHandler, keyof DurableObject>>,
  Assert<Equal<"alarm" extends keyof SessionRpc ? true : false, false>>,
  Assert<Equal<"fetch" extends keyof FeedRpc ? true : false, false>>,
];

// A hand-written surface that drifted from the class does not pass for it.
type DriftedSurface = { recordCall(call: LlmCall): ReturnType<SessionRpc["recordCall"]> };
// @ts-expect-error recordCall of the class takes an LlmCallInput, not only a full LlmCall
export type DriftedIsRefused = Assert<Equal<DriftedSurface, Pick<SessionRpc, "recordCall">>>;
