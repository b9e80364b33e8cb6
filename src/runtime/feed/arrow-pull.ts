/**
 * @module The binary answer of `POST /v1/feed/pull` (`Accept: application/vnd.apache.arrow.stream`):
 * one Arrow IPC stream whose single record batch holds every pulled sample, one row each in
 * group → member → segment order, and whose schema metadata `edge_rollout.pull` holds the pull's
 * JSON answer with each member's `samples` a count and `first_sample` its first row.
 */
import type { FeedGroup, FeedMember, PullResponse } from "../../schemas/feed";
import type { ArrowTable } from "../../sink/arrow/arrow-format";
import { encodeArrowStream } from "../../sink/arrow/arrow-ipc";
import { concatSampleTables, sampleTableMetadata } from "../../sink/sample-columns";
import type { PulledGroup } from "./inline-samples";

/** Schema metadata key of the pull's JSON part. */
export const PULL_METADATA_KEY = "edge_rollout.pull";

/** A member in the Arrow pull's metadata: its rows are `first_sample` … `first_sample + samples - 1`. */
export type ArrowPullMember = FeedMember & { first_sample: number; record_error?: string };

/** The JSON part of an Arrow pull (under PULL_METADATA_KEY). */
export type ArrowPullMetadata = PullResponse<Omit<FeedGroup, "members"> & { members: ArrowPullMember[] }> & { returned_groups: number; samples: number };

/** The pull as one Arrow IPC stream (an empty pull: zero rows, the metadata still says so). */
export function encodeArrowPull(response: Omit<PullResponse<unknown>, "groups">, groups: PulledGroup[], returned: number): Uint8Array {
  const tables: ArrowTable[] = [];
  let row = 0;
  const described = groups.map((group) => ({
    ...group,
    members: group.members.map(({ table, ...member }): ArrowPullMember => {
      const first = row;
      if (table) {
        tables.push(table);
        row += table.length;
      }
      return { ...member, samples: table?.length ?? 0, first_sample: first };
    }),
  }));
  const metadata: ArrowPullMetadata = { ...response, groups: described, returned_groups: returned, samples: row };
  return encodeArrowStream(concatSampleTables(tables), sampleTableMetadata({ [PULL_METADATA_KEY]: JSON.stringify(metadata) }));
}
