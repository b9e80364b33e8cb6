/** Integration: `/v1/feed/{pull,ack,stats,config}` over HTTP: inline samples, validation, problem+json. */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import type { FeedGroup, InlineFeedGroup, PullResponse } from "../../../../src/schemas/feed";
import { api } from "../../../fixtures/rollouts";
import {
  defaultFeed,
  drainDefaultFeed,
  expectProblem,
  feedStats,
  ingestAll,
  postJson,
  publishGroup,
  publishHandResult,
} from "../../fixtures/feed-fixtures";

beforeEach(drainDefaultFeed);

describe("POST /v1/feed/pull", () => {
  it("returns each member's samples inline, equal to its R2 record's, and acks over HTTP", async () => {
    const { uid, messages, records } = await publishGroup(2);
    await ingestAll(defaultFeed(), messages);
    const response = await postJson("/v1/feed/pull", { max_groups: 1, inline: true });
    expect(response.status).toBe(200);
    const pulled = (await response.json()) as PullResponse<InlineFeedGroup>;
    expect(pulled.groups.map((g) => g.uid)).toEqual([uid]);
    expect(pulled.groups[0]!.members.map((m) => m.samples)).toEqual(records.map((r) => r.samples));
    expect(pulled.groups[0]!.members[1]).toMatchObject({
      rollout_id: messages[1]!.rollout_id,
      key: messages[1]!.key,
      status: "succeeded",
    });
    const acked = await postJson("/v1/feed/ack", { lease_id: pulled.lease_id });
    expect(await acked.json()).toEqual({
      lease_id: pulled.lease_id,
      acked_groups: 1,
      already: false,
    });
    expect(await feedStats()).toMatchObject({ ready_groups: 0, leased_groups: 0 });
  });

  it("returns R2 keys and sample counts without inline", async () => {
    const { messages } = await publishGroup(1);
    await ingestAll(defaultFeed(), messages);
    const pulled = (await (
      await postJson("/v1/feed/pull", { max_groups: 1 })
    ).json()) as PullResponse<FeedGroup>;
    expect(pulled.groups[0]!.members[0]).toMatchObject({ key: messages[0]!.key, samples: 1 });
    expect(pulled.lease_expires_at).toBeGreaterThan(Date.now());
  });

  it("delivers a failed member's samples flagged for masking, even when its record did not flag them", async () => {
    const uid = "uid-inline-failure";
    // Failures that are policy outcomes (a PolicyError, a rollout out of time) are delivered in their group, masked.
    const failed = await publishHandResult({
      uid,
      sample_index: 0,
      group_size: 2,
      termination_reason: "ENV_ERROR",
      signal: { outcome: "policy" },
    });
    const unflagged = await publishHandResult({
      uid,
      sample_index: 1,
      group_size: 2,
      termination_reason: "TIMEOUT",
      signal: { outcome: "policy" },
    });
    const bare = {
      ...unflagged.record,
      samples: unflagged.record.samples.map((sample) => ({ ...sample, extra_fields: {} })),
    };
    await env.TRAJECTORIES.put(unflagged.message.key, JSON.stringify(bare));
    await ingestAll(defaultFeed(), [failed.message, unflagged.message]);
    const pulled = (await (
      await postJson("/v1/feed/pull", { max_groups: 1, inline: true })
    ).json()) as PullResponse<InlineFeedGroup>;
    const [first, second] = pulled.groups[0]!.members;
    expect(first!.samples).toEqual(failed.record.samples);
    expect(first!.samples[0]!.extra_fields).toMatchObject({
      failed: true,
      trainable: false,
      status: "failed",
    });
    expect(second!.samples.map((sample) => sample.extra_fields)).toEqual([
      { failed: true, trainable: false, status: "failed" },
    ]);
  });

  it("gives a member whose record is missing no samples and a record_error, rather than failing the pull", async () => {
    const { messages } = await publishGroup(1);
    await env.TRAJECTORIES.delete(messages[0]!.key);
    await ingestAll(defaultFeed(), messages);
    const pulled = (await (
      await postJson("/v1/feed/pull", { max_groups: 1, inline: true })
    ).json()) as PullResponse<InlineFeedGroup>;
    expect(pulled.groups[0]!.members[0]).toMatchObject({
      samples: [],
      record_error: `no R2 object at ${messages[0]!.key}`,
    });
  });

  it("answers 422 naming each bad field", async () => {
    const problem = await expectProblem(
      await postJson("/v1/feed/pull", { lease_ms: 500, inline: "yes", extra: 1 }),
      422,
    );
    expect(problem.errors?.map((e) => e.path).sort()).toEqual(["extra", "inline", "lease_ms"]);
    expect(problem.errors?.find((e) => e.path === "lease_ms")?.message).toBe(
      "lease_ms must be >= 1000",
    );
    expect(
      (
        await expectProblem(
          await postJson("/v1/feed/pull", { lease_ms: 3_600_001, max_groups: 1 }),
          422,
        )
      ).errors?.[0]?.path,
    ).toBe("lease_ms");
    expect((await expectProblem(await postJson("/v1/feed/pull", {}), 422)).errors?.[0]).toEqual({
      path: "max_groups",
      message: "max_groups or max_samples is required",
    });
    expect(
      (
        await expectProblem(
          await postJson("/v1/feed/pull", { max_groups: 1, training_mode: "verl/nope" }),
          422,
        )
      ).errors?.[0]?.path,
    ).toBe("training_mode");
    await expectProblem(await postJson("/v1/feed/pull", "{ max_groups"), 400);
  });
});

describe("POST /v1/feed/ack", () => {
  it("answers 409 to an ack of an expired lease over HTTP, and delivers its group again", async () => {
    const { uid, messages } = await publishGroup(2);
    await ingestAll(defaultFeed(), messages);
    const first = (await (
      await postJson("/v1/feed/pull", { max_groups: 1, lease_ms: 1_000 })
    ).json()) as PullResponse<FeedGroup>;
    expect(first.groups.map((g) => g.uid)).toEqual([uid]);
    await new Promise((r) => setTimeout(r, 1_100));
    const again = (await (
      await postJson("/v1/feed/pull", { max_groups: 1, lease_ms: 60_000 })
    ).json()) as PullResponse<FeedGroup>;
    expect(again.groups.map((g) => [g.uid, g.deliveries])).toEqual([[uid, 2]]);
    const problem = await expectProblem(
      await postJson("/v1/feed/ack", { lease_id: first.lease_id }),
      409,
    );
    expect(JSON.stringify(problem)).toMatch(/expired/);
    expect((await postJson("/v1/feed/ack", { lease_id: again.lease_id })).status).toBe(200);
  });

  it("answers 409 for an unknown lease and 422 without a lease_id", async () => {
    const problem = await expectProblem(
      await postJson("/v1/feed/ack", { lease_id: "lease-unknown" }),
      409,
    );
    expect(problem.errors?.[0]?.path).toBe("lease_id");
    expect((await expectProblem(await postJson("/v1/feed/ack", {}), 422)).errors?.[0]?.path).toBe(
      "lease_id",
    );
  });
});

describe("GET /v1/feed/stats and /v1/feed/config", () => {
  it("reports totals, counts by training mode and the policy version", async () => {
    const { messages } = await publishGroup(2, { training_mode: "verl/one_step_off" });
    await ingestAll(defaultFeed(), messages.slice(0, 1));
    const stats = await feedStats();
    expect(stats).toMatchObject({
      policy_version: expect.any(Number),
      pending_groups: 1,
      config: { group_timeout_ms: null },
    });
    expect(stats.by_training_mode["verl/one_step_off"]).toMatchObject({
      pending_groups: 1,
      ingested: expect.any(Number),
    });
    await ingestAll(defaultFeed(), messages.slice(1));
  });

  it("changes the group timeout and refuses a bad one with 422", async () => {
    const put = (body: unknown) =>
      api("/v1/feed/config", { method: "PUT", body: JSON.stringify(body) });
    expect(await (await put({ group_timeout_ms: 60_000 })).json()).toMatchObject({
      group_timeout_ms: 60_000,
    });
    expect(await (await api("/v1/feed/config")).json()).toMatchObject({ group_timeout_ms: 60_000 });
    expect(await (await put({})).json()).toMatchObject({ group_timeout_ms: 60_000 });
    expect((await expectProblem(await put({ group_timeout_ms: 0 }), 422)).errors?.[0]?.path).toBe(
      "group_timeout_ms",
    );
    expect(await (await put({ group_timeout_ms: null })).json()).toMatchObject({
      group_timeout_ms: null,
    });
  });
});
