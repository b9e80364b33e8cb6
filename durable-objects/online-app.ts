/** @module One application's online sessions (one instance per application, named by its id): sessions, feedback, windows, retention. */
import { DurableObject } from "cloudflare:workers";
import { RequestCounter } from "../src/runtime";
import { installSurface, objects } from "../src/runtime/objects";
import { OnlineAppCore, type OnlineAppApi, type OnlineSessionPort } from "../src/runtime/online";
import { ONLINE_OUTCOME_SPAN } from "../src/runtime/session";
import { AppId, type OnlineFields } from "../src/schemas/online";

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface OnlineApp extends OnlineAppApi {}

/** Closing and deleting a session's rollout: its own object, and its records in R2. */
function sessionPort(env: Env): OnlineSessionPort {
  return {
    async close(rolloutId: string, fields: OnlineFields): Promise<void> {
      const session = objects(env).session(rolloutId);
      const added = await session.addEvents([
        { kind: "annotation", name: ONLINE_OUTCOME_SPAN, value: fields, attributes: {} },
      ]);
      // Gone (deleted meanwhile) or already ended (a limit, the backstop deadline): nothing to end.
      if (!added.ok) return;
      await session.finishExternal(
        fields.status === "scored"
          ? { reward: fields.reward, termination_reason: "ENV_DONE" }
          : {
              reward: null,
              termination_reason: "TIMEOUT",
              outcome: "infra",
              error: "the feedback window closed without feedback: withheld, never scored 0",
            },
      );
    },
    async report(outcomes): Promise<void> {
      await objects(env).onlineControl().reportOutcomes(outcomes);
    },
    async purge(rolloutId: string): Promise<void> {
      await objects(env).session(rolloutId).purge();
      const prefix = `rollouts/${rolloutId}/`;
      for (let cursor: string | undefined; ;) {
        const page = await env.TRAJECTORIES.list({ prefix, ...(cursor ? { cursor } : {}) });
        if (page.objects.length > 0) await env.TRAJECTORIES.delete(page.objects.map((o) => o.key));
        if (!page.truncated) break;
        cursor = page.cursor;
      }
    },
  };
}

/** An application's sessions: opened once per conversation, fed back to, closed and deleted by the alarm. */
export class OnlineApp extends DurableObject<Env> implements OnlineAppApi {
  readonly #core: OnlineAppCore;
  readonly #requests = new RequestCounter();
  /** The application this object serves, learned from its first call (its name is the app id). */
  #appId: string | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#core = new OnlineAppCore({
      sql: ctx.storage.sql,
      sessions: sessionPort(env),
      getAlarm: () => ctx.storage.getAlarm(),
      setAlarm: (time) => ctx.storage.setAlarm(time),
      now: () => Date.now(),
    });
  }

  static {
    installSurface<OnlineApp, OnlineAppApi>(OnlineApp, (s) => s.#requests, {
      openSession: (s, appId, sessionId, version, promptKey, settings) =>
        s.#core.openSession(s.#remember(appId), sessionId, version, promptKey, settings),
      session: (s, appId, sessionId) => s.#core.session(s.#remember(appId), sessionId),
      listSessions: (s, appId, limit) => s.#core.listSessions(s.#remember(appId), limit),
      addFeedback: (s, appId, sessionId, event) =>
        s.#core.addFeedback(s.#remember(appId), sessionId, event),
      deleteSession: (s, appId, sessionId) => s.#core.deleteSession(s.#remember(appId), sessionId),
    });
  }

  /** Keeps the app id for the alarm (which is given no arguments), stored so a restarted object knows it. */
  #remember(appId: AppId): AppId {
    if (this.#appId !== appId) {
      this.#appId = appId;
      void this.ctx.storage.put("app_id", appId);
    }
    return appId;
  }

  /** Closes the sessions whose window passed and deletes those past retention. */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    const appId = this.#appId ?? (await this.ctx.storage.get<string>("app_id"));
    if (!appId || !AppId.safeParse(appId).success) return;
    this.#appId = appId;
    await this.#core.onAlarm(appId);
  }
}
