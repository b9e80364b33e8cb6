/**
 * @module What a gateway call is asked with and what it answers: the route establishes who asked
 * (`GatewayCallMeta`) and relays the answer (`GatewayCallResult`) that the session's call returns.
 */
import type { WireError } from "../../../gateway/wire-errors";
import type { CallPurpose } from "../../../schemas/llm-call";

/** Who asked for a gateway call, as the route established it. */
export interface GatewayCallMeta {
  callId: string;
  /** The runner attempt in the path, when the call came through an attempt's endpoint. */
  pathAttempt?: number;
  /** The attempt the call belongs to (path or header), null when neither says. */
  attempt: number | null;
  purpose: CallPurpose;
  /**
   * A harness turn (Messages, Responses, or chat asking for it): earlier turns are the gateway's
   * own records and a continuation's prompt is built from token ids (src/gateway/turns/); always
   * answered as one JSON reply, which the route turns into the caller's API.
   */
  turns?: boolean;
  /**
   * The client named the call (`x-edge-rollout-call-id`): a retry with the same id attaches to the
   * call if it is still running after a restart, or reads its answer again if it was recorded.
   */
  clientCallId?: boolean;
}

/** A gateway call's answer: an SSE body to relay, a JSON reply's text, or an error as data. */
export type GatewayCallResult =
  | { ok: true; stream: ReadableStream<Uint8Array> }
  | { ok: true; json: string }
  | { ok: false; error: WireError };
