/** @module The two URLs of one vLLM server: the OpenAI API base (`…/v1`) and the root (`/health`, `/tokenize`). */

/** Where to send what on one server. */
export interface ReplicaUrls {
  /** OpenAI base, always ending in `/v1`; also the replica's name in LlmCall records and hints. */
  api: string;
  /** Server root without `/v1`: vLLM serves `/health` and `/tokenize` here, not under `/v1`. */
  root: string;
}

/**
 * Normalises a configured server URL given with or without a trailing `/v1` (and slashes):
 * `http://h:8000`, `http://h:8000/` and `http://h:8000/v1/` all name `http://h:8000/v1`.
 */
export function replicaUrls(url: string): ReplicaUrls {
  const trimmed = url.trim().replace(/\/+$/, "");
  const root = trimmed.replace(/\/v1$/, "");
  return { api: `${root}/v1`, root };
}
