import { describe, expect, it } from "vitest";
import { ReplicaRouter } from "../../../../src/gateway/backends";
import { PREFIX_HASH_CHARS, prefixKey } from "../../../../src/gateway/backends/prefix-key";
import type { JsonObject } from "../../../../src/schemas/json";
import { manualClock } from "./backend-fixtures";

const ALL = ["http://gpu-0:8000/v1", "http://gpu-1:8000/v1", "http://gpu-2:8000/v1"];

function prefixHashRouter() {
  return new ReplicaRouter(ALL, {
    loadFactor: 1.25,
    now: manualClock().now,
    probe: () => Promise.resolve(false),
    routing: { policy: "prefix_hash", bound: 16 },
  });
}

const chat = (system: string, user: string, more: JsonObject[] = []): JsonObject => ({
  messages: [{ role: "system", content: system }, { role: "user", content: user }, ...more],
});
const keyOf = (body: JsonObject) => (maxChars?: number) => prefixKey(body, maxChars);

describe("prefix_hash routing", () => {
  it("sends every call with one prompt prefix to one replica, whatever its rollout, hint or the load there", async () => {
    const router = prefixHashRouter();
    const group = chat("doc", "task 7");
    const leases = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        router.acquire(
          `r-${i}`,
          ALL[i % 3],
          keyOf(i % 2 ? group : chat("doc", "task 7", [{ role: "assistant", content: `${i}` }])),
        ),
      ),
    );
    expect(new Set(leases.map((lease) => lease.url)).size).toBe(1);
    for (const lease of leases) lease.release("ok");
  });

  it("spreads different prefixes over the replicas, and moves a prefix to one other replica while its own is down", async () => {
    const router = prefixHashRouter();
    const urls = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const lease = await router.acquire(`r-${i}`, null, keyOf(chat("doc", `task ${i}`)));
        lease.release("ok");
        return lease.url;
      }),
    );
    expect(new Set(urls).size).toBe(3);
    const down = urls[0]!;
    const failed = await router.acquire("r-0", null, keyOf(chat("doc", "task 0")));
    failed.release("failed");
    const moved = await Promise.all(
      [0, 1, 2].map(
        async () => (await router.acquire("r-x", null, keyOf(chat("doc", "task 0")))).url,
      ),
    );
    expect(moved[0]).not.toBe(down);
    expect(new Set(moved).size).toBe(1);
  });

  it("keys a chat by its first PREFIX_HASH_CHARS characters: prompts that differ only beyond them share a key", () => {
    const shared = "s".repeat(PREFIX_HASH_CHARS);
    expect(prefixKey(chat(shared, "task 1"), PREFIX_HASH_CHARS)).toBe(
      prefixKey(chat(shared, "task 2"), PREFIX_HASH_CHARS),
    );
    expect(prefixKey(chat("short", "task 1"), PREFIX_HASH_CHARS)).not.toBe(
      prefixKey(chat("short", "task 2"), PREFIX_HASH_CHARS),
    );
    expect(prefixKey(chat(shared, "task 1"))).not.toBe(prefixKey(chat(shared, "task 2")));
  });
});
