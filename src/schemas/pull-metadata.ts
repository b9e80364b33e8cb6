/**
 * @module The JSON part of the trainer feed's Arrow pull (`POST /v1/feed/pull` with `Accept:
 * application/vnd.apache.arrow.stream`): the pull's JSON answer, carried in the stream's schema
 * metadata under PULL_METADATA_KEY, with each member's `samples` a count of rows and
 * `first_sample` its first row. Written by src/runtime/feed/arrow-pull.ts, read by trainers and
 * the command line's `drain`.
 */
import type { FeedGroup, FeedMember, PullResponse } from "./feed";

/** Schema metadata key of the pull's JSON part. */
export const PULL_METADATA_KEY = "edge_rollout.pull";

/** A member in the Arrow pull's metadata: its rows are `first_sample` … `first_sample + samples - 1`. */
export type ArrowPullMember = FeedMember & { first_sample: number; record_error?: string };

/** The JSON part of an Arrow pull (under PULL_METADATA_KEY). */
export type ArrowPullMetadata = PullResponse<
  Omit<FeedGroup, "members"> & { members: ArrowPullMember[] }
> & { returned_groups: number; samples: number };
