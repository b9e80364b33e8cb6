/**
 * @module The simulator's side of vLLM's prefill/decode handshake (NixlConnector protocol).
 * A prefill-role server answers the proxy's prefill leg (`kv_transfer_params.do_remote_decode:
 * true`) and returns `kv_transfer_params` naming the KV blocks a decode server would pull; a
 * decode-role server admits only requests carrying such params for the very prompt it renders.
 *
 * There is no KV cache, so the block ids are a signature instead: an HMAC of the engine id and
 * the prompt's token ids. The key is a fixed constant, so every simulator (in this process or
 * another one started from the CLI) verifies every other's params; it proves "a prefill of this
 * prompt happened", which is what a proxy can get wrong, and is not a security boundary.
 */
import { createHmac } from "node:crypto";
import type { PdEngine } from "./context";
import { validationError } from "./errors";
import type { PdRole } from "./options";
import type { StatsRecorder } from "./stats";

const SIGNATURE_KEY = "edge-rollout vllm-simulator kv-transfer v1";
/** vLLM's default KV block size: one remote block id per 16 prompt tokens, as a real prefill reports. */
const BLOCK_SIZE = 16;

/** The request fields the handshake reads. */
export interface PdRequest {
  kv_transfer_params?: Record<string, unknown> | null | undefined;
  stream?: boolean | null | undefined;
}

/** The block ids a prefill of `promptIds` on `engineId` reports (at least one, so even a short prompt is signed). */
export function signedBlockIds(engineId: string, promptIds: readonly number[]): number[] {
  const hmac = createHmac("sha256", SIGNATURE_KEY).update(engineId).update("\u0000");
  hmac.update(Buffer.from(Uint32Array.from(promptIds).buffer));
  const digest = hmac.digest();
  const blocks = Math.max(1, Math.ceil(promptIds.length / BLOCK_SIZE));
  // 31-bit ids (vLLM's are non-negative ints); block i mixes its index so ids differ along the prompt.
  return Array.from({ length: blocks }, (_, i) => (digest.readUInt32BE((i % 8) * 4) ^ Math.imul(i, 0x9e3779b1)) >>> 1);
}

function reject(stats: StatsRecorder, message: string, param = "kv_transfer_params"): never {
  stats.pd("rejected");
  throw validationError(message, param);
}

function sameIds(a: unknown, b: readonly number[]): boolean {
  return Array.isArray(a) && a.length === b.length && a.every((id, i) => id === b[i]);
}

/**
 * Applies the server's role to one generation request whose prompt renders to `promptIds`.
 * Returns the top-level `kv_transfer_params` of the answer (a prefill's handle for the decode
 * server), or null. Throws vLLM's 400 naming `kv_transfer_params` (or `stream`) when the role
 * refuses the request; counts every outcome in `stats.pd`.
 */
export function admitPdRequest(role: PdRole, request: PdRequest, promptIds: readonly number[], engine: PdEngine, stats: StatsRecorder): Record<string, unknown> | null {
  if (role === "both") return null;
  const params = request.kv_transfer_params ?? null;
  if (role === "prefill") {
    if (params?.do_remote_decode !== true) reject(stats, "This server is a prefill instance: requests need kv_transfer_params with do_remote_decode=true.");
    // vLLM's proxy always sends the prefill leg unstreamed; the handle rides on the JSON answer.
    if (request.stream) reject(stats, "A prefill instance answers the prefill leg with stream=false.", "stream");
    stats.pd("prefill");
    return {
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_engine_id: engine.engineId,
      remote_block_ids: signedBlockIds(engine.engineId, promptIds),
      remote_host: engine.host,
      remote_port: engine.port,
      tp_size: 1,
    };
  }
  if (params === null) reject(stats, "This server is a decode instance: requests need kv_transfer_params from a prefill instance.");
  if (params.do_remote_prefill !== true) reject(stats, "kv_transfer_params must come from a prefill instance (do_remote_prefill=true).");
  const engineId = params.remote_engine_id;
  if (typeof engineId !== "string" || !sameIds(params.remote_block_ids, signedBlockIds(engineId, promptIds))) {
    reject(stats, "kv_transfer_params do not match this prompt: remote_block_ids were not produced by a prefill of it.");
  }
  stats.pd("decode");
  return null;
}
