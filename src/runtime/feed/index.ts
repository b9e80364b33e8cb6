/**
 * @module The trainer feed as the rest of the Worker uses it: the parts its object class is made of
 * (the group rules, its packs and their compaction) and its RPC interface, what the pull route
 * encodes and streams, and what the results consumer runs (ingestion, packing, delivery checks).
 */
export { encodeArrowPullChunks, encodeStreamedPullHead } from "./arrow-pull";
export { answerDeliveryChecks, confirmDeliveries } from "./delivery-checks";
export type { TrainerFeedApi } from "./feed-api";
export type { PullLimits } from "./feed-core";
export { feedParts, type FeedParts } from "./feed-parts";
export type { FieldIssue, PullResult } from "./feed-results";
export { packCompletedGroups, type CompletedGroup } from "./group-pack";
export {
  inlineGroups,
  MAX_INLINE_BYTES,
  MAX_INLINE_GROUPS,
  MAX_INLINE_MEMBERS,
  readPulledSamples,
} from "./inline-samples";
export type { PackRef } from "./pack-index";
export { MAX_STREAMED_BYTES, planStreamedPull } from "./pack-spans";
export { AcceptHeader, negotiatePullFormat, PULL_MEDIA_TYPES } from "./pull-format";
export { ingestResults, type BatchIngestOutcome, type IngestionTargets } from "./result-ingestion";
