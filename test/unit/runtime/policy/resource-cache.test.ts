import { describe, expect, it } from "vitest";
import type { GetResourceResult } from "../../../../src/runtime/policy/policy-results";
import { ResourceVersionCache } from "../../../../src/runtime/policy/resource-cache";

/** A policy object's resource reads, counted: each version's value is `<name>@<version>` padded to `size`. */
function policyReads(size = 10) {
  const reads: string[] = [];
  const fetch = async (name: string, version: number): Promise<GetResourceResult> => {
    reads.push(`${name}@${version}`);
    await new Promise((done) => setTimeout(done, 1));
    if (name === "missing") return { ok: false, reason: "not_found" };
    const value = `${name}@${version}`.padEnd(size, ".");
    return { ok: true, name, version, id: `${name}@${version}`, value, created_at: 0 };
  };
  return { reads, fetch };
}

describe("ResourceVersionCache (unit)", () => {
  it("reads a version once however many ask, at once or later, and a new version again", async () => {
    const policy = policyReads();
    const cache = new ResourceVersionCache(policy.fetch);
    const first = await Promise.all([cache.get("tmpl", 1), cache.get("tmpl", 1)]);
    const again = await cache.get("tmpl", 1);
    const next = await cache.get("tmpl", 2);
    expect(policy.reads).toEqual(["tmpl@1", "tmpl@2"]);
    expect([...first, again].map((r) => r.ok && r.value)).toEqual([
      "tmpl@1....",
      "tmpl@1....",
      "tmpl@1....",
    ]);
    expect(next).toMatchObject({ ok: true, version: 2, id: "tmpl@2" });
  });

  it("keeps no answer that found nothing, and lets the least recently used go past its bytes", async () => {
    const policy = policyReads(100);
    // Room for two values of ~102 bytes of JSON.
    const cache = new ResourceVersionCache(policy.fetch, 250);
    await cache.get("missing", 1);
    await cache.get("missing", 1);
    await cache.get("a", 1);
    await cache.get("b", 1);
    await cache.get("a", 1); // a is now the most recently used
    await cache.get("c", 1); // b goes
    await cache.get("a", 1);
    await cache.get("b", 1);
    expect(policy.reads).toEqual(["missing@1", "missing@1", "a@1", "b@1", "c@1", "b@1"]);
  });
});
