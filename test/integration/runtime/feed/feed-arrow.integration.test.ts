/**
 * Integration: `POST /v1/feed/pull` answered as an Arrow IPC stream (issue 14). Every sample
 * pulled as Arrow equals the JSON pull of the same groups, for every sample kind; the sample
 * tables the sink wrote and the records published before them are both read.
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { PULL_METADATA_KEY, type ArrowPullMetadata } from "../../../../src/schemas/pull-metadata";
import type { InlineFeedGroup, PullResponse } from "../../../../src/schemas/feed";
import type { TrainingSample } from "../../../../src/schemas/training-sample";
import { ARROW_STREAM_MEDIA_TYPE } from "../../../../src/sink/formats/arrow/arrow-format";
import { decodeArrowStream } from "../../../../src/sink/formats/arrow/arrow-read";
import { rolloutSamplesKey } from "../../../../src/sink/publication/r2-keys";
import { columnsToSamples } from "../../../../src/sink/formats/sample-columns";
import { api, uniqueId } from "../../../fixtures/rollouts";
import {
  defaultFeed,
  drainDefaultFeed,
  expectProblem,
  feedStats,
  ingestAll,
  postJson,
  publishGroup,
} from "../../fixtures/feed-fixtures";
import { publishKinds, SAMPLE_KINDS } from "./sample-kinds-fixtures";

const ARROW = { "content-type": "application/json", accept: ARROW_STREAM_MEDIA_TYPE };

async function pullArrow(
  body: unknown,
  accept = ARROW_STREAM_MEDIA_TYPE,
): Promise<{ meta: ArrowPullMetadata; samples: TrainingSample[]; response: Response }> {
  const response = await api("/v1/feed/pull", {
    method: "POST",
    headers: { ...ARROW, accept },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  const table = decodeArrowStream(new Uint8Array(await response.arrayBuffer()));
  return {
    meta: JSON.parse(table.metadata[PULL_METADATA_KEY]!) as ArrowPullMetadata,
    samples: columnsToSamples(table),
    response,
  };
}

/** The Arrow pull in the JSON pull's shape: each member's rows put back under it. */
function asInline(meta: ArrowPullMetadata, samples: TrainingSample[]): InlineFeedGroup[] {
  return meta.groups.map((group) => ({
    ...group,
    members: group.members.map(({ first_sample, ...member }) => ({
      ...member,
      samples: samples.slice(first_sample, first_sample + member.samples),
    })),
  }));
}

/** Leased again after a 1 s lease lapses: the same groups, one delivery later. */
async function afterLeaseLapses(): Promise<void> {
  await new Promise((done) => setTimeout(done, 1_100));
}

describe("the Arrow pull", () => {
  beforeEach(drainDefaultFeed);

  it("carries every sample kind exactly as the JSON pull does", async () => {
    const batchId = uniqueId("arrow-kinds");
    const k = SAMPLE_KINDS;
    const a = await publishKinds(batchId, [
      k.multi_turn!,
      k.drift!,
      k.untrainable!,
      k.missing_logprobs!,
    ]);
    const b = await publishKinds(batchId, [k.failed!, k.no_sample!]);
    await ingestAll(defaultFeed(), [...a.messages, ...b.messages]);
    const json = (await (
      await postJson("/v1/feed/pull", {
        max_groups: 10,
        inline: true,
        lease_ms: 1_000,
        batch_id: batchId,
      })
    ).json()) as PullResponse<InlineFeedGroup>;
    expect(json.groups.map((g) => g.uid)).toEqual([a.uid, b.uid]);
    await afterLeaseLapses();
    const { meta, samples, response } = await pullArrow({ max_groups: 10, batch_id: batchId });
    expect([response.headers.get("content-type"), response.headers.get("vary")]).toEqual([
      ARROW_STREAM_MEDIA_TYPE,
      "accept",
    ]);
    const strip = (groups: InlineFeedGroup[]) => groups.map(({ deliveries: _d, ...g }) => g);
    expect(strip(asInline(meta, samples))).toEqual(strip(json.groups));
    expect(meta.groups.map((g) => g.deliveries)).toEqual([2, 2]);
    // The kinds are really there: drift made two segments, a failed member's sample is flagged, one member has none.
    const members = json.groups.flatMap((g) => g.members);
    expect(members.map((m) => m.samples.length)).toEqual([1, 2, 1, 1, 1, 0]);
    expect(members[0]!.samples[0]!.response_mask).toEqual([1, 1, 0, 0, 1, 1]);
    expect(members[2]!.samples[0]!.extra_fields).toMatchObject({ trainable: false });
    expect(members[4]!.samples[0]!.extra_fields).toMatchObject({
      failed: true,
      trainable: false,
      status: "failed",
    });
    expect(meta.samples).toBe(6);
  });

  it("reads a rollout published before sample tables from its record, and equals that record's samples", async () => {
    const batchId = uniqueId("arrow-legacy");
    const legacy = await publishGroup(2, { batch_id: batchId });
    expect(
      await env.TRAJECTORIES.head(rolloutSamplesKey(legacy.messages[0]!.rollout_id)),
    ).toBeNull();
    await ingestAll(defaultFeed(), legacy.messages);
    const { meta, samples } = await pullArrow({ max_groups: 10, batch_id: batchId });
    expect(asInline(meta, samples)[0]!.members.map((m) => m.samples)).toEqual(
      legacy.records.map((r) => r.samples),
    );
  });

  it("keeps the pull's filters: only groups under uid_prefix are leased", async () => {
    const batchId = uniqueId("arrow-filter");
    const wanted = await publishKinds(batchId, [SAMPLE_KINDS.multi_turn!]);
    const other = await publishKinds(batchId, [SAMPLE_KINDS.drift!]);
    await ingestAll(defaultFeed(), [...wanted.messages, ...other.messages]);
    const { meta } = await pullArrow({ max_groups: 10, uid_prefix: wanted.uid });
    expect(meta.groups.map((g) => g.uid)).toEqual([wanted.uid]);
    expect((await feedStats()).by_batch[batchId]).toMatchObject({
      ready_groups: 1,
      leased_groups: 1,
    });
  });

  it("answers an empty feed with zero rows and a null lease", async () => {
    const { meta, samples } = await pullArrow({ max_groups: 4, batch_id: uniqueId("arrow-none") });
    expect([meta.lease_id, meta.groups, meta.returned_groups, samples]).toEqual([null, [], 0, []]);
  });
});

describe("content negotiation of the pull", () => {
  beforeEach(drainDefaultFeed);

  it("answers JSON without Accept, for */* and when JSON has the higher q", async () => {
    for (const accept of [undefined, "*/*", `${ARROW_STREAM_MEDIA_TYPE};q=0.2, application/json`]) {
      const response = await api("/v1/feed/pull", {
        method: "POST",
        headers: accept ? { accept } : {},
        body: JSON.stringify({ max_groups: 1 }),
      });
      expect([accept, response.headers.get("content-type")]).toEqual([accept, "application/json"]);
    }
  });

  it("answers Arrow when it is named beside JSON at the same q", async () => {
    const { response } = await pullArrow(
      { max_groups: 1 },
      `${ARROW_STREAM_MEDIA_TYPE}, application/json`,
    );
    expect(response.headers.get("content-type")).toBe(ARROW_STREAM_MEDIA_TYPE);
  });

  it("refuses an Accept it cannot serve with 406 problem+json, leasing nothing", async () => {
    const batchId = uniqueId("arrow-406");
    const group = await publishKinds(batchId, [SAMPLE_KINDS.multi_turn!]);
    await ingestAll(defaultFeed(), group.messages);
    const response = await api("/v1/feed/pull", {
      method: "POST",
      headers: { accept: "application/x-safetensors" },
      body: JSON.stringify({ max_groups: 1, batch_id: batchId }),
    });
    const problem = await expectProblem(response, 406);
    expect(problem.errors?.[0]?.path).toBe("accept");
    expect((await feedStats()).by_batch[batchId]).toMatchObject({
      ready_groups: 1,
      leased_groups: 0,
    });
  });

  it("validates the body of an Arrow pull like a JSON one (422 naming the field)", async () => {
    const response = await api("/v1/feed/pull", {
      method: "POST",
      headers: ARROW,
      body: JSON.stringify({ max_groups: 0 }),
    });
    expect((await expectProblem(response, 422)).errors?.[0]?.path).toBe("max_groups");
  });
});
