/**
 * @module What the dashboard shows of online serving (docs/online.md): the applications, and one
 * application's sessions counted per version (./online-version-rows.ts) against the split and the
 * split guard.
 */
import { NotFoundError } from "../../src/errors";
import { objects } from "../../src/runtime/objects";
import type { GuardView } from "../../src/runtime/online";
import {
  AppId,
  type AppView,
  type OnlineSessionView,
  type ServingConfig,
} from "../../src/schemas/online";
import type { AppEnv } from "../env";
import { versionRows, type VersionRow } from "./online-version-rows";

/** How many of an application's newest sessions the page counts. */
export const SESSIONS_COUNTED = 1_000;

/** One application's page. */
export interface OnlineAppView {
  app: AppView;
  serving: ServingConfig;
  versions: VersionRow[];
  sessions: OnlineSessionView[];
  guard: GuardView;
}

/** The application id in a path: one of the deployment's, else 404 (a malformed id names none). */
export function appIdParam(raw: string | undefined): AppId {
  const parsed = AppId.safeParse(raw);
  if (!parsed.success) throw new NotFoundError("no such application");
  return parsed.data;
}

/** Every application, newest first. */
export async function onlineAppsView(env: AppEnv): Promise<AppView[]> {
  const apps = await objects(env).onlineControl().listApps();
  return [...apps].sort((a, b) => b.created_at - a.created_at);
}

/** The application `appId`, or 404. */
export async function onlineApp(env: AppEnv, appId: AppId): Promise<AppView> {
  const app = (await objects(env).onlineControl().listApps()).find((a) => a.app_id === appId);
  if (!app) throw new NotFoundError(`no application ${appId}`);
  return app;
}

/** Application `appId`'s page: its newest sessions per version, the split and the guard. */
export async function onlineAppView(env: AppEnv, appId: AppId): Promise<OnlineAppView> {
  const control = objects(env).onlineControl();
  const [app, serving, guard, sessions] = await Promise.all([
    onlineApp(env, appId),
    control.serving(),
    control.guard(),
    objects(env).onlineApp(appId).listSessions(appId, SESSIONS_COUNTED),
  ]);
  return { app, serving, guard, sessions, versions: versionRows(sessions, serving) };
}
