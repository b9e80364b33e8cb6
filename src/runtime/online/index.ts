/**
 * @module Online serving's objects (docs/online.md): the deployment's control (applications, their
 * keys, the serving versions and split) and one object per application (its sessions, feedback,
 * windows and retention). Reached through the object directory.
 */
export { ONLINE_APP_METHODS, type OnlineAppApi } from "./online-app-api";
export {
  OnlineAppCore,
  type FeedbackResult,
  type OnlineAppDeps,
  type OnlineSessionPort,
  type OpenedSession,
} from "./online-app-core";
export { ONLINE_CONTROL_METHODS, type OnlineControlApi } from "./online-control-api";
export {
  OnlineControlCore,
  type AppKeyRecord,
  type GuardView,
  type ServingChange,
} from "./online-control-core";
