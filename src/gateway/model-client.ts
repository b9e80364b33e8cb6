/** @module The in-process path to the gateway: chat input in, the agent's response and the call's record out. */
import type { ChatMessage, ToolDefinition } from "../schemas/chat";
import type { JsonObject } from "../schemas/json";
import type { LlmCall } from "../schemas/llm-call";
import { type ModelResponse, modelResponseFrom } from "../sdk/model-response";
import { ModelError } from "../errors";
import type { Gateway, GatewayCall } from "./gateway";
import { notInterruptibleBecause } from "./interruptible";

/** What the caller wants generated. The gateway applies the policy and clamps `max_tokens`. */
export interface ChatInput {
  messages: ChatMessage[];
  tools: ToolDefinition[];
  /** Used outside training mode (in training mode the policy's sampling parameters apply). */
  temperature: number;
  topP: number;
  seed: number | null;
}

/**
 * A response for the agent plus the record of the call for the session. The call's admission is
 * released in the background: `call.policy_version_end` is the version admitted, and `released`
 * (never rejecting) the version in force when the release landed. Whoever stores the call waits
 * for it and corrects the stored version when the two differ (a weight sync ended meanwhile).
 */
export interface ChatResult {
  response: ModelResponse;
  call: LlmCall;
  released: Promise<number>;
}

/** Chat calls for code running inside the Worker: no HTTP hop to the gateway, the same record. */
export interface ModelClient {
  chat(input: ChatInput, call: Omit<GatewayCall, "whileSyncing">): Promise<ChatResult>;
  /**
   * Sends the releases its gateway's admission still holds back (see release-on-next-admission.ts),
   * so every `released` so far resolves soon; a caller that ends its work calls it.
   */
  flushReleases?(): Promise<void>;
  /** Whether every call of `rolloutId` made through this client is known released (after `flushReleases`). */
  releasedAll?(rolloutId: string): boolean;
}

/** The chat-completions body for `input`; tools only when there are some. */
export function buildChatBody(input: ChatInput): JsonObject {
  const body: JsonObject = {
    messages: input.messages as JsonObject[],
    temperature: input.temperature,
    top_p: input.topP,
  };
  if (input.tools.length > 0) body.tools = input.tools as JsonObject[];
  if (input.seed !== null) body.seed = input.seed;
  return body;
}

/** Where a call registers its interrupt so an `interrupt` weight sync reaches it (its rollout's session). */
export type InterruptsFor = (
  rolloutId: string,
  callId: string,
) => NonNullable<GatewayCall["interrupts"]>;

/**
 * A plain call streamed from upstream and assembled here, so that an `interrupt` weight sync can
 * cut it and resume it from token ids (resumable-call.ts) instead of waiting for it. Answers as
 * soon as the call is recorded, not at the stream's end (which waits for the admission's release).
 */
async function interruptibleChat(
  gateway: Gateway,
  body: JsonObject,
  call: GatewayCall,
): Promise<ChatResult> {
  let recorded: { call: LlmCall; released: Promise<number> } | undefined;
  let onRecorded!: () => void;
  const ready = new Promise<void>((resolve) => (onRecorded = resolve));
  const response = await gateway.stream(
    "/chat/completions",
    body,
    call,
    async (record, released) => {
      recorded = { call: record, released };
      onRecorded();
    },
  );
  // Read to its end in the background: the pump records the call before the final [DONE].
  // (discarded as it comes: the reply is assembled from the record, not from these bytes).
  const drained = (
    response.body ? response.body.pipeTo(new WritableStream()) : Promise.resolve()
  ).then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([ready, drained]);
  if (!recorded)
    throw new ModelError("the upstream stream ended without a reply", { retryable: false });
  return {
    response: modelResponseFrom(recorded.call),
    call: recorded.call,
    released: recorded.released,
  };
}

/**
 * A model client over the gateway. In-process callers wait out a weight sync (the gateway
 * re-asks the policy) instead of receiving 429. The reply is handed back before the admission's
 * release lands, so the caller's own work (the agent, the environment) overlaps that round trip.
 * With `interruptsFor`, plain calls (interruptible.ts) are streamed and registered there, so an
 * `interrupt` sync cuts and resumes them as it does HTTP callers' calls; others are drained.
 *
 * @example
 * const client = createModelClient(createGateway({ policy: null, backendFor: () => backend, defaultModel: "sim-qwen3", now: Date.now }));
 */
export function createModelClient(gateway: Gateway, interruptsFor?: InterruptsFor): ModelClient {
  return {
    async chat(input, call) {
      const body = buildChatBody(input);
      if (interruptsFor && notInterruptibleBecause("/chat/completions", body) === null)
        return interruptibleChat(gateway, body, {
          ...call,
          whileSyncing: "wait",
          interrupts: interruptsFor(call.rolloutId, call.callId),
        });
      const { call: record, released } = await gateway.sendUnreleased("/chat/completions", body, {
        ...call,
        whileSyncing: "wait",
      });
      return { response: modelResponseFrom(record), call: record, released };
    },
    flushReleases: () => gateway.flushReleases(),
    releasedAll: (rolloutId) => gateway.releasedAll(rolloutId),
  };
}
