/** @module `ctx.artifacts`: a rollout's files in R2, the stand-in for a per-rollout directory. */
import type { BlobStorePort } from "../../ports";
import { AgentContractError } from "../../sdk/contract-error";
import type { Artifacts } from "../../sdk/rollout-info";

/** `rollouts/<rollout id>/artifacts/`: beside the rollout's record and ATIF document. */
export function artifactsPrefix(rolloutId: string): string {
  return `rollouts/${rolloutId}/artifacts/`;
}

/** Relative paths only: no leading slash, no empty, `.` or `..` segments, no backslashes. */
function checkedPath(path: string): string {
  const segments = path.split("/");
  if (
    path === "" ||
    path.length > 512 ||
    path.includes("\\") ||
    segments.some((segment) => segment === "" || segment === "." || segment === "..")
  ) {
    throw new AgentContractError(
      `artifact path "${path}" must be relative (like "out/answer.txt"): no leading "/", no empty, "." or ".." segments, at most 512 characters`,
    );
  }
  return path;
}

/** The artifacts of one rollout; each write counts as a sign of life for the attempt's watchdog. */
export function artifactStore(
  blobs: BlobStorePort,
  rolloutId: string,
  touch: () => void,
): Artifacts {
  const prefix = artifactsPrefix(rolloutId);
  const read = (path: string) => blobs.get(prefix + checkedPath(path));
  return {
    prefix,
    async write(path, body, options = {}) {
      const key = prefix + checkedPath(path);
      const bytes =
        body instanceof Uint8Array
          ? (body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer)
          : body;
      touch();
      await blobs.put(
        key,
        bytes,
        options.contentType ??
          (typeof body === "string" ? "text/plain; charset=utf-8" : "application/octet-stream"),
      );
      touch();
      return key;
    },
    read,
    async readText(path) {
      const bytes = await read(path);
      return bytes === null ? null : new TextDecoder().decode(bytes);
    },
  };
}
