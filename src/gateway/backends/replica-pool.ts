/** @module Builds a ReplicaRouter for a configured server list, rejecting duplicates by field path. */
import { type BackendDeps, rejectBackendField } from "./backend-registry";
import { probeHealth } from "./health-probe";
import { ReplicaRouter, type ReplicaRouterOptions } from "./replica-router";
import { replicaUrls } from "./replica-url";

/**
 * A router over `urls` that probes with `GET /health`. Two entries naming the same server
 * (`http://h:8000` and `http://h:8000/v1/`) would split one server's load accounting in two,
 * so they are rejected as `backend.<field>.<index>`.
 */
export function createReplicaPool(
  field: string,
  urls: readonly string[],
  deps: BackendDeps,
  options: { apiKey?: string | undefined; loadFactor: number } & Pick<
    ReplicaRouterOptions,
    "timing" | "routing"
  >,
): ReplicaRouter {
  const seen = new Set<string>();
  urls.forEach((url, index) => {
    const { api } = replicaUrls(url);
    if (seen.has(api))
      rejectBackendField(
        `backend.${field}.${index}`,
        `names the same server as an earlier entry (${api})`,
      );
    seen.add(api);
  });
  return new ReplicaRouter(urls, {
    loadFactor: options.loadFactor,
    ...(options.routing ? { routing: options.routing } : {}),
    now: deps.now,
    timing: options.timing,
    probe: (replica) => probeHealth(deps.fetch, replica.root, { apiKey: options.apiKey }),
  });
}
