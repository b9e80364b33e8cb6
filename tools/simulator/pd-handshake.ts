/**
 * @module The simulator's side of vLLM's prefill/decode handshake (NixlConnector protocol).
 * A prefill-role server answers the proxy's prefill leg (`kv_transfer_params.do_remote_decode:
 * true`) and returns `kv_transfer_params` naming the KV blocks a decode server would pull
 * (vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py); a decode-role server pulls
 * them only for the very prompt it renders, and computes the prefill itself when there are none.
 *
 * There is no KV cache, so the block ids are a signature instead: an HMAC of the engine id and
 * the prompt's token ids. The key is a fixed constant, so every simulator (in this process or
 * another one started from the CLI) verifies every other's params; it proves "a prefill of this
 * prompt happened", which is what a proxy can get wrong, and is not a security boundary.
 */
import { createHmac } from "node:crypto";
import type { PdEngine } from "./context";
import { validationError } from "./errors";
import type { CompatConfig, PdRole } from "./options";
import type { StatsRecorder } from "./stats";

const SIGNATURE_KEY = "edge-rollout vllm-simulator kv-transfer v1";
/** vLLM's default KV block size: one remote block id per 16 prompt tokens, as a real prefill reports. */
const BLOCK_SIZE = 16;

/** The request fields the handshake reads. */
export interface PdRequest {
  kv_transfer_params?: Record<string, unknown> | null | undefined;
}

/** What a server does with one request, by its role and the request's `kv_transfer_params`. */
export type PdAdmission = "whole" | "prefill" | "decode" | "recompute";

/**
 * The block ids a prefill of `promptIds` on `engineId` reports for KV-cache group `group` (at least
 * one, so even a short prompt is signed).
 */
export function signedBlockIds(
  engineId: string,
  promptIds: readonly number[],
  group = 0,
): number[] {
  const hmac = createHmac("sha256", SIGNATURE_KEY)
    .update(engineId)
    .update("\u0000")
    .update(String(group))
    .update("\u0000");
  hmac.update(Buffer.from(Uint32Array.from(promptIds).buffer));
  const digest = hmac.digest();
  const blocks = Math.max(1, Math.ceil(promptIds.length / BLOCK_SIZE));
  // 31-bit ids (vLLM's are non-negative ints); block i mixes its index so ids differ along the prompt.
  return Array.from(
    { length: blocks },
    (_, i) => (digest.readUInt32BE((i % 8) * 4) ^ Math.imul(i, 0x9e3779b1)) >>> 1,
  );
}

function reject(stats: StatsRecorder, message: string): never {
  stats.pd("rejected");
  throw validationError(message, "kv_transfer_params");
}

function sameIds(a: unknown, b: readonly number[]): boolean {
  return Array.isArray(a) && a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Whether `blockIds` are what a prefill of `promptIds` on `engineId` reported: one flat list (older vLLM) or one list per group. */
function genuineBlockIds(
  blockIds: unknown,
  engineId: string,
  promptIds: readonly number[],
): boolean {
  if (!Array.isArray(blockIds) || blockIds.length === 0) return false;
  if (!Array.isArray(blockIds[0])) return sameIds(blockIds, signedBlockIds(engineId, promptIds));
  return blockIds.every((group, g) => sameIds(group, signedBlockIds(engineId, promptIds, g)));
}

/**
 * Applies the server's role to one generation request whose prompt renders to `promptIds`, and
 * counts the outcome in `stats.pd`. A prefill server answers the proxy's prefill leg
 * (`do_remote_decode: true`), streamed or not. A decode server pulls a genuine prefill's blocks,
 * or, like vLLM's NixlConnector when the params are absent or lack the remote fields, computes the
 * prefill itself. Throws vLLM's 400 naming `kv_transfer_params` for what a proxy got wrong:
 * a plain request on a prefill server, a prefill leg sent to a decode server, forged blocks.
 */
export function admitPdRequest(
  role: PdRole,
  request: PdRequest,
  promptIds: readonly number[],
  stats: StatsRecorder,
): PdAdmission {
  if (role === "both") return "whole";
  const params = request.kv_transfer_params ?? null;
  if (role === "prefill") {
    if (params?.do_remote_decode !== true)
      reject(
        stats,
        "This server is a prefill instance: requests need kv_transfer_params with do_remote_decode=true.",
      );
    stats.pd("prefill");
    return "prefill";
  }
  if (params === null || Object.keys(params).length === 0) {
    stats.pd("recomputed");
    return "recompute";
  }
  if (params.do_remote_decode === true)
    reject(
      stats,
      "This server is a decode instance: a prefill leg (do_remote_decode=true) belongs on a prefill instance.",
    );
  if (params.do_remote_prefill !== true)
    reject(stats, "kv_transfer_params must come from a prefill instance (do_remote_prefill=true).");
  // NixlConnectorScheduler.update_state_after_alloc: params missing a remote field are logged as
  // invalid and the request runs without a KV transfer.
  const complete = [
    "remote_engine_id",
    "remote_request_id",
    "remote_host",
    "remote_port",
    "remote_block_ids",
  ].every((key) => params[key] !== undefined && params[key] !== null);
  if (!complete) {
    stats.pd("recomputed");
    return "recompute";
  }
  const engineId = params.remote_engine_id;
  if (
    typeof engineId !== "string" ||
    !genuineBlockIds(params.remote_block_ids, engineId, promptIds)
  ) {
    reject(
      stats,
      "kv_transfer_params do not match this prompt: remote_block_ids were not produced by a prefill of it.",
    );
  }
  stats.pd("decode");
  return "decode";
}

/** What the prefill's answer needs to build its handle. */
export interface PrefillOutcome {
  engine: PdEngine;
  promptIds: readonly number[];
  /** The engine request id the decode server's transfer names (vLLM's `remote_request_id`). */
  requestId: string;
  /** How the one-token prefill finished. */
  finishReason: "stop" | "length" | "abort";
}

/**
 * The prefill's `kv_transfer_params` (NixlConnectorScheduler.request_finished). A prefill that
 * stopped on EOS hands nothing off under `compat.prefillEosParams: "null"`: the answer says
 * `kv_transfer_params: null` and the decode server computes the prefill itself.
 */
export function prefillHandle(
  outcome: PrefillOutcome,
  compat: CompatConfig,
): Record<string, unknown> | null {
  if (outcome.finishReason === "stop" && compat.prefillEosParams === "null") return null;
  const { engine, promptIds } = outcome;
  const groups = Array.from({ length: compat.kvCacheGroups }, (_, g) =>
    signedBlockIds(engine.engineId, promptIds, g),
  );
  return {
    do_remote_prefill: true,
    do_remote_decode: false,
    remote_block_ids: compat.blockIdsLayout === "flat" ? groups[0] : groups,
    remote_engine_id: engine.engineId,
    remote_request_id: outcome.requestId,
    remote_host: engine.host,
    remote_port: engine.port,
    tp_size: 1,
    remote_num_tokens: promptIds.length,
  };
}
