/**
 * @module The binary answer of `POST /v1/feed/pull` (`Accept: application/vnd.apache.arrow.stream`):
 * one Arrow IPC stream of every pulled sample, one row each in group → member → segment order,
 * whose schema metadata `edge_rollout.pull` holds the pull's JSON answer with each member's
 * `samples` a count and `first_sample` its first row (src/schemas/pull-metadata.ts). Groups read
 * from their packs are passed through: each group's stored record batch goes out byte for byte
 * behind the pull's own schema message, so the Worker neither decodes nor re-encodes their
 * samples. Only when the groups' column types differ (a rare int64 token id or float64 logprob)
 * is everything decoded into one batch.
 */
import type { PullResponse } from "../../schemas/feed";
import {
  PULL_METADATA_KEY,
  type ArrowPullMember,
  type ArrowPullMetadata,
} from "../../schemas/pull-metadata";
import type { ArrowTable } from "../../sink/formats/arrow/arrow-format";
import {
  ARROW_EOS,
  columnsSignature,
  encodeArrowStream,
  encodeRecordBatchFrame,
  encodeSchemaFrame,
  joinChunks,
} from "../../sink/formats/arrow/arrow-ipc";
import type { Column } from "../../sink/formats/arrow/vectors";
import {
  concatSampleTables,
  readSampleTable,
  samplesToColumns,
  sampleTableMetadata,
} from "../../sink/formats/sample-columns";
import { groupPackStream } from "./group-pack";
import type { PulledGroup } from "./inline-samples";
import type { StreamedPull } from "./pack-spans";

/** One group's rows as record batch messages, and the columns that type them. */
interface GroupBatches {
  columns: Column[];
  signature: string;
  batches: Uint8Array[];
}

function groupBatches(group: PulledGroup): GroupBatches | null {
  if (group.pack) {
    const { columns, signature, batch, rows } = group.pack;
    return rows.some((n) => n > 0) ? { columns, signature, batches: [batch] } : null;
  }
  const tables = group.members.flatMap((m) => (m.table && m.table.length > 0 ? [m.table] : []));
  if (tables.length === 0) return null;
  const columns = concatSampleTables(tables);
  return {
    columns,
    signature: columnsSignature(columns),
    batches: encodeRecordBatchFrame(columns),
  };
}

function describe(groups: PulledGroup[]): { described: ArrowPullMetadata["groups"]; rows: number } {
  return describeRows(
    groups.map(({ pack, ...group }) => ({
      group,
      rows: group.members.map((m, i) => (pack ? pack.rows[i]! : (m.table?.length ?? 0))),
    })),
  );
}

/** Each group with its members' first rows, given each member's row count, in stream order. */
function describeRows(groups: Array<{ group: Omit<PulledGroup, "pack">; rows: number[] }>): {
  described: ArrowPullMetadata["groups"];
  rows: number;
} {
  let row = 0;
  const described = groups.map(({ group, rows }) => ({
    ...group,
    members: group.members.map(({ table: _table, ...member }, i): ArrowPullMember => {
      const first = row;
      row += rows[i]!;
      return { ...member, samples: rows[i]!, first_sample: first };
    }),
  }));
  return { described, rows: row };
}

/**
 * The schema message of a streamed pull (pack-spans.ts): the pull's metadata over the planned
 * groups; their record batches follow as range reads, then ARROW_EOS.
 */
export function encodeStreamedPullHead(
  response: Omit<PullResponse<unknown>, "groups">,
  plan: StreamedPull,
): Uint8Array[] {
  const { described, rows } = describeRows(
    plan.groups.map(({ group, rows }) => ({
      group: { ...group, members: group.members.map((m) => ({ ...m, table: null })) },
      rows,
    })),
  );
  const metadata: ArrowPullMetadata = {
    ...response,
    groups: described,
    returned_groups: plan.returned.length,
    samples: rows,
  };
  return encodeSchemaFrame(
    plan.columns,
    sampleTableMetadata({ [PULL_METADATA_KEY]: JSON.stringify(metadata) }),
  );
}

/** Every group as member tables (packs decoded): the slow path, for groups whose types differ. */
function decodedTables(groups: PulledGroup[]): ArrowTable[] {
  return groups.flatMap((group) => {
    if (group.pack) return [readSampleTable(groupPackStream(group.pack))];
    return group.members.flatMap((m) => (m.table ? [m.table] : []));
  });
}

/**
 * The pull as the chunks of one Arrow IPC stream (an empty pull: zero rows, the metadata still
 * says so), to be sent back to back: packs' record batches are views of what was read, not copies.
 */
export function encodeArrowPullChunks(
  response: Omit<PullResponse<unknown>, "groups">,
  groups: PulledGroup[],
  returned: number,
): Uint8Array[] {
  const { described, rows } = describe(groups);
  const metadata: ArrowPullMetadata = {
    ...response,
    groups: described,
    returned_groups: returned,
    samples: rows,
  };
  const schemaMetadata = sampleTableMetadata({ [PULL_METADATA_KEY]: JSON.stringify(metadata) });
  const parts = groups.map(groupBatches).filter((p): p is GroupBatches => p !== null);
  if (parts.every((p) => p.signature === parts[0]!.signature)) {
    const columns = parts[0]?.columns ?? samplesToColumns([]);
    return [
      ...encodeSchemaFrame(columns, schemaMetadata),
      ...parts.flatMap((p) => p.batches),
      ARROW_EOS,
    ];
  }
  return [encodeArrowStream(concatSampleTables(decodedTables(groups)), schemaMetadata)];
}

/** The pull as one Arrow IPC stream, in one buffer. */
export function encodeArrowPull(
  response: Omit<PullResponse<unknown>, "groups">,
  groups: PulledGroup[],
  returned: number,
): Uint8Array {
  return joinChunks(encodeArrowPullChunks(response, groups, returned));
}
