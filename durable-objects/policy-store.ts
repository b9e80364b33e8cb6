/** @module The Durable Object that holds the policy and named resources: typed RPC methods over PolicyCore. */
import { DurableObject } from "cloudflare:workers";
import { installSurface, objects } from "../src/runtime/objects";
import { PolicyCore, type PolicyStoreApi } from "../src/runtime/policy";
import { RequestCounter, type RequestCounts } from "../src/runtime";
import { PressureController } from "../src/runtime/pressure";
import type { PressureShare } from "../src/schemas/pressure";

/** `GET url` as text within `timeoutMs`, or null: an unreachable replica is left out of the sample. */
async function fetchText(url: string, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    return await response.text();
  } catch {
    return null;
  }
}

/** The methods installed from the table below; the class writes out the rest of PolicyStoreApi. */
type Installed = Omit<PolicyStoreApi, "requestCounts" | "pressureShare">;

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface PolicyStore extends Installed {}

/**
 * The policy version, model, backend and sampling defaults the trainer controls, the weight-sync
 * handshake, and immutable versioned resources. One instance, POLICY_OBJECT_NAME (see
 * src/runtime/object-names.ts). Model calls never come here: the admission shards admit them under
 * the fence this object pushes on every change (so it serves trainer requests, not traffic).
 */
export class PolicyStore extends DurableObject<Env> implements PolicyStoreApi {
  readonly #core: PolicyCore;
  readonly #pressure: PressureController;
  readonly #requests = new RequestCounter();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    this.#core = new PolicyCore({
      storage: { sql: storage.sql, transactionSync: (fn) => storage.transactionSync(fn) },
      now: () => Date.now(),
      shards: objects(env).shards(),
    });
    this.#pressure = new PressureController({
      sql: storage.sql,
      now: () => Date.now(),
      // No backend set: the deployment default, one server at LLM_BASE_URL.
      backend: () =>
        this.#core.fence().snapshot.backend ??
        (env.LLM_BASE_URL ? { name: "vllm", replicas: [env.LLM_BASE_URL] } : null),
      fetchText,
      getAlarm: () => storage.getAlarm(),
      setAlarm: (at) => storage.setAlarm(at),
    });
  }

  static {
    installSurface<PolicyStore, Installed>(PolicyStore, (s) => s.#requests, {
      snapshot: (s) => s.#core.snapshot(),
      fence: (s) => s.#core.fence(),
      republish: (s) => s.#core.republish(),
      update: (s, patch) => s.#core.update(patch),
      beginSync: (s, requestedVersion, mode) => s.#core.beginSync(requestedVersion, mode),
      waitIdle: (s, timeoutMs) => s.#core.waitIdle(timeoutMs),
      endSync: (s, policyVersion) => s.#core.endSync(policyVersion),
      abortSync: (s) => s.#core.abortSync(),
      syncs: (s, from, to, limit) => s.#core.syncs(from, to, limit),
      putResource: (s, name, value) => s.#core.putResource(name, value),
      getResource: (s, name, version) => s.#core.getResource(name, version),
      pressure: (s) => s.#pressure.view(),
      configurePressure: (s, patch) => s.#pressure.configure(patch),
    });
  }

  /** A batch tracker's periodic ask for its share of the rollouts in flight (see src/runtime/pressure). */
  pressureShare(batchId: string, maxConcurrent: number, live: number): Promise<PressureShare> {
    this.#requests.count("pressureShare");
    return this.#pressure.share(String(batchId), Number(maxConcurrent), Number(live));
  }

  /** Samples the replicas' KV pressure (the only alarm this object sets). */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    await this.#pressure.onAlarm();
  }

  /** Requests this object served since it started (benchmarks read it; not persisted). */
  requestCounts(): RequestCounts {
    return this.#requests.read();
  }
}
