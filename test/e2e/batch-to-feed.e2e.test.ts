import { readFileSync } from "node:fs";
import { request } from "node:http";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MiniflareStack, startMiniflareStack } from "../../scripts/miniflare-stack";
import { freePort } from "../../tools/simulator/free-port";

const root = resolve(import.meta.dirname, "../..");
const rows = readFileSync(resolve(root, "test/fixtures/datasets/calculator.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as unknown);

/** POSTs `bytes` bytes of JSON-ish body over a real connection; resolves with the status and content type, or the socket error. */
function postLarge(
  url: string,
  bytes: number,
  chunked: boolean,
): Promise<{ status?: number; type?: string; error?: string }> {
  return new Promise((done) => {
    const headers: Record<string, string | number> = { "content-type": "application/json" };
    if (!chunked) headers["content-length"] = bytes;
    const req = request(url, { method: "POST", headers }, (res) => {
      res.resume();
      res.on("end", () => done({ status: res.statusCode, type: res.headers["content-type"] }));
    });
    req.on("error", (error) => done({ error: String(error) }));
    const piece = Buffer.alloc(64 * 1024, "a");
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

interface Progress {
  done: boolean;
  counts: Record<string, number>;
}
interface PulledGroup {
  uid: string;
  group_size: number;
  members: Array<{
    rollout_id: string;
    sample_index: number;
    samples: Array<{
      uid: string;
      response_ids: number[];
      response_mask: number[];
      response_logprobs: number[];
      extra_fields: { tree?: { root: string; branch_step: number; path: string[] } };
    }>;
  }>;
}

describe("a GRPO batch on the local stack, from rows to pulled groups (end to end)", () => {
  let stack: MiniflareStack;
  const call = async (path: string, body?: unknown) => {
    const response = await fetch(
      `${stack.workerUrl}${path}`,
      body === undefined ? {} : { method: "POST", body: JSON.stringify(body) },
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    stack = await startMiniflareStack({
      workerPort: await freePort(),
      simulator: { port: 0, seed: 5 },
      stateDir: `.tmp/e2e-batch-${process.pid}`,
    });
  }, 120_000);
  afterAll(() => stack?.stop());

  // Issue 27: a client still sending got a reset, not its 413, when the server answered first.
  it("answers a 3 MB body to a 1 MiB route with 413 problem+json over the wire, sized up front or chunked, not a reset", async () => {
    for (const chunked of [false, true]) {
      const answer = await postLarge(
        `${stack.workerUrl}/v1/rollouts/e2e-large/finish`,
        3 * 1024 * 1024,
        chunked,
      );
      expect(answer, chunked ? "chunked" : "with content-length").toEqual({
        status: 413,
        type: "application/problem+json",
      });
    }
  });

  it("runs 16 rows × n=4 calculator rollouts, delivers 16 complete groups once, and re-submission creates nothing", async () => {
    const batch = {
      batch_id: `e2e-${Date.now()}`,
      agent: "calculator",
      rows,
      n: 4,
      mode: "train",
      data_manager: "train",
    };
    const submitted = await call("/v1/batches", batch);
    expect(submitted.status).toBe(202);
    expect(submitted.body.rollouts).toBe(64);

    let progress: Progress | undefined;
    for (
      const deadline = Date.now() + 90_000;
      Date.now() < deadline;
      await new Promise((r) => setTimeout(r, 250))
    ) {
      progress = (await call(`/v1/batches/${batch.batch_id}`)).body as unknown as Progress;
      if (progress.done) break;
    }
    expect(progress?.done).toBe(true);
    // No faults are injected: all 64 succeed (a batch of failures would also "finish").
    expect(progress!.counts).toMatchObject({ succeeded: 64, failed: 0 });

    const groups: PulledGroup[] = [];
    for (const deadline = Date.now() + 30_000; groups.length < 16 && Date.now() < deadline;) {
      const pulled = await call("/v1/feed/pull", {
        max_groups: 16,
        lease_ms: 60_000,
        inline: true,
      });
      groups.push(...((pulled.body.groups as PulledGroup[]) ?? []));
      if (pulled.body.lease_id)
        expect((await call("/v1/feed/ack", { lease_id: pulled.body.lease_id })).status).toBe(200);
      else await new Promise((r) => setTimeout(r, 250));
    }
    expect(groups).toHaveLength(16);
    expect(new Set(groups.map((group) => group.uid)).size).toBe(16);
    for (const group of groups) {
      expect(group.members.map((member) => member.sample_index).sort()).toEqual([0, 1, 2, 3]);
      for (const sample of group.members.flatMap((member) => member.samples)) {
        expect(sample.uid).toBe(group.uid);
        expect(sample.response_mask).toHaveLength(sample.response_ids.length);
        expect(sample.response_logprobs).toHaveLength(sample.response_ids.length);
      }
    }
    const stats = (await call("/v1/feed/stats")).body;
    expect(stats).toMatchObject({ ready_groups: 0, pending_groups: 0, leased_groups: 0 });

    const again = await call("/v1/batches", batch);
    expect(again.status).toBe(200);
    const after = (await call("/v1/feed/pull", { max_groups: 16, lease_ms: 60_000 })).body;
    expect(after.groups).toEqual([]);
    expect((await call("/v1/feed/stats")).body.ingested).toBe(stats.ingested);
  }, 180_000);

  // Issue 32: tree sampling as a batch option; every node's group complete in the feed.
  it("runs a tree batch (2 dialogue rows, branched at steps 1 and 2 into 2) and pulls one complete group per node with the tree fields", async () => {
    const batch = {
      batch_id: `e2e-tree-${Date.now()}`,
      agent: "dialogue",
      n: 1,
      config: { max_steps: 3, max_tokens_per_call: 16 },
      tree: { branch_at: [1, 2], width: 2 },
      rows: [0, 1].map((i) => ({
        prompt: `Tell me about topic ${i}.`,
        reward_model: { ground_truth: null },
        extra_info: { index: i },
        turns: 3,
      })),
    };
    const submitted = await call("/v1/batches", batch);
    expect(submitted.status).toBe(202);
    expect(submitted.body.rollouts).toBe(14);
    let progress: Progress | undefined;
    for (
      const deadline = Date.now() + 60_000;
      Date.now() < deadline && !progress?.done;
      await new Promise((r) => setTimeout(r, 250))
    )
      progress = (await call(`/v1/batches/${batch.batch_id}`)).body as unknown as Progress;
    expect(progress!.counts).toMatchObject({ succeeded: 14, failed: 0, not_released: 0 });
    const groups = new Map<string, PulledGroup>();
    for (const deadline = Date.now() + 30_000; groups.size < 8 && Date.now() < deadline;) {
      const pulled = await call("/v1/feed/pull", {
        max_groups: 16,
        lease_ms: 60_000,
        inline: true,
        batch_id: batch.batch_id,
      });
      for (const group of (pulled.body.groups as PulledGroup[]) ?? []) groups.set(group.uid, group);
      if (pulled.body.lease_id)
        expect((await call("/v1/feed/ack", { lease_id: pulled.body.lease_id })).status).toBe(200);
      else await new Promise((r) => setTimeout(r, 250));
    }
    // Per row: the root's group of 1, its children's group at step 1, and one group per child at step 2.
    const expected = [0, 1].flatMap((row) => [
      `${batch.batch_id}:${row}`,
      ...["t1", "t1-0.t2", "t1-1.t2"].map((node) => `${batch.batch_id}:${row}:0.${node}`),
    ]);
    expect([...groups.keys()].sort()).toEqual(expected.sort());
    for (const group of groups.values()) {
      expect(group.members.map((member) => member.sample_index).sort()).toEqual(
        group.uid.includes(".t") ? [0, 1] : [0],
      );
      for (const member of group.members) {
        const tree = member.samples[0]?.extra_fields.tree;
        expect(member.samples.every((sample) => sample.uid === group.uid)).toBe(true);
        if (!group.uid.includes(".t")) expect(tree).toBeUndefined();
        else
          expect(tree).toMatchObject({
            root: member.rollout_id.split(".t")[0],
            branch_step: group.uid.endsWith(".t1") ? 1 : 2,
            path: expect.arrayContaining([member.rollout_id]),
          });
      }
    }
  }, 120_000);
});
