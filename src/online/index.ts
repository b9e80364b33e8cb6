/**
 * @module Online serving's rules (docs/online.md): application keys, the traffic split, the
 * feedback rule, per-key rate limits, the isolate's short-lived caches and the names of online
 * sessions. Pure: the objects that keep applications and sessions are in src/runtime/online/.
 */
export { appIdOfKey, hashAppKey, keyPrefix, newAppId, newAppKey } from "./app-keys";
export { combineFeedback, FEEDBACK_RULE } from "./feedback-rule";
export { onlinePlacement, onlineRolloutId, type OnlinePlacement } from "./online-ids";
export { onlineSessionSpec, type OnlineSessionInput } from "./online-spec";
export { RateLimiter, type RateVerdict } from "./rate-limit";
export { assignVersion, splitProblems, type SplitProblem } from "./traffic-split";
export { guardActions, versionRewards, type GuardAction, type VersionReward } from "./split-guard";
export { TtlCache } from "./ttl-cache";
