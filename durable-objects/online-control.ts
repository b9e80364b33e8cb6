/** @module The deployment's online control (one instance, "default"): applications, their hashed keys, the serving versions and split. */
import { DurableObject } from "cloudflare:workers";
import { RequestCounter } from "../src/runtime";
import { installSurface } from "../src/runtime/objects";
import { OnlineControlCore, type OnlineControlApi } from "../src/runtime/online";

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface OnlineControl extends OnlineControlApi {}

/**
 * Written by admin routes, read by each isolate's short-lived caches (a key's record, the serving
 * configuration): no model call reaches it.
 */
export class OnlineControl extends DurableObject<Env> implements OnlineControlApi {
  readonly #core: OnlineControlCore;
  readonly #requests = new RequestCounter();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#core = new OnlineControlCore(ctx.storage.sql);
  }

  static {
    installSurface<OnlineControl, OnlineControlApi>(OnlineControl, (s) => s.#requests, {
      createApp: (s, input) => s.#core.createApp(input),
      listApps: (s) => s.#core.listApps(),
      revokeApp: (s, appId) => s.#core.revokeApp(appId),
      keyRecord: (s, appId) => s.#core.keyRecord(appId),
      serving: (s) => s.#core.serving(),
      setServing: (s, input) => s.#core.setServing(input),
      setSplit: (s, weights) => s.#core.setSplit(weights),
      reportOutcomes: (s, outcomes) => s.#core.reportOutcomes(outcomes),
      guard: (s) => s.#core.guard(),
      setGuard: (s, config) => s.#core.setGuard(config),
    });
  }
}
