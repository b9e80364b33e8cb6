/**
 * Integration: what an admission shard keeps in SQLite, on a real workerd Durable Object. An
 * admission is stored before it is answered and survives the object's restart; releases are
 * deleted in batches, yet counted at once; a shard restarted on the current code keeps counting
 * the calls stored in the earlier table layout.
 */
import type { AdmissionShardRpc } from "../../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { RELEASE_BATCH_MS } from "../../../../src/runtime/policy/in-flight-table";
import { writeMetaText } from "../../../../src/runtime/meta-table";
import { policy, sleep, uniqueCallId } from "../../fixtures/policy-fixtures";

/**
 * A shard of its own (no other test's calls). Its stubs are made anew on every use: a stub that
 * saw its object reset stays broken, as a caller's would after a deploy.
 */
function freshShard() {
  const namespace = env.ADMISSION_SHARD;
  const id = namespace.idFromName(`storage-${uniqueCallId("shard")}`);
  const raw = () => namespace.get(id);
  const rpc = new Proxy({} as AdmissionShardRpc, {
    get:
      (_target, method: string) =>
      (...args: unknown[]) =>
        (raw() as unknown as Record<string, (...a: unknown[]) => unknown>)[method]!(...args),
  });
  return { raw, rpc };
}

/** Rows stored in the shard's table right now (read inside the object, bypassing its memory). */
function storedRows(raw: () => DurableObjectStub): Promise<number> {
  return runInDurableObject(
    raw(),
    (_instance, state) =>
      state.storage.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM in_flight_calls`).one().n,
  );
}

/** Restarts the object: its memory is gone, its SQLite stays (as after a deploy or a crash). */
async function restart(raw: () => DurableObjectStub): Promise<void> {
  await runInDurableObject(raw(), (_instance, state) => state.abort("test restart")).catch(
    () => undefined,
  );
}

describe("an admission shard's storage", () => {
  it("keeps counting admitted calls across a restart, and only the ones not released", async () => {
    const { raw, rpc } = freshShard();
    const ids = Array.from({ length: 5 }, (_, i) => uniqueCallId(`kept-${i}`));
    for (const id of ids) expect((await rpc.acquire(id, 60_000, "rollout-a")).ok).toBe(true);
    await rpc.release(ids[0]!);
    await rpc.release(ids[1]!);
    // Counted at once, before the batch of releases reaches SQLite.
    expect(await rpc.inFlight()).toBe(3);
    await sleep(RELEASE_BATCH_MS * 3);
    await restart(raw);
    expect(await rpc.inFlight()).toBe(3);
    // A call admitted before the restart is still the same call: re-acquiring does not count it twice.
    expect((await rpc.acquire(ids[2]!, 60_000, "rollout-a")).ok).toBe(true);
    expect(await rpc.inFlight()).toBe(3);
    expect(await rpc.releaseRollout("rollout-a")).toBe(3);
    expect(await rpc.inFlight()).toBe(0);
  });

  it("deletes released calls in one batch after a short wait, with no read to trigger it", async () => {
    const { raw, rpc } = freshShard();
    const ids = Array.from({ length: 40 }, (_, i) => uniqueCallId(`batch-${i}`));
    await Promise.all(ids.map((id) => rpc.acquire(id, 60_000)));
    expect(await storedRows(raw)).toBe(40);
    const releasing = Date.now();
    await Promise.all(ids.slice(0, 30).map((id) => rpc.release(id)));
    const stored = await storedRows(raw);
    // Inside the batching window the rows are still stored (this read bypasses the shard's memory);
    // a loaded machine can take longer than the window to send 30 releases, and then a batch may
    // already have deleted the releases that had arrived by then (never a row still admitted).
    if (Date.now() - releasing < RELEASE_BATCH_MS) expect(stored).toBe(40);
    else {
      expect(stored).toBeGreaterThanOrEqual(10);
      expect(stored).toBeLessThanOrEqual(40);
    }
    await sleep(RELEASE_BATCH_MS * 4);
    // ...and after it they are gone without any count having asked.
    expect(await storedRows(raw)).toBe(10);
  });

  it("stores a drive's next admission in the row of the call it releases, in the same write, not in a timer commit of its own", async () => {
    const { raw, rpc } = freshShard();
    const first = uniqueCallId("step-0");
    const second = uniqueCallId("step-1");
    expect((await rpc.acquire(first, 60_000, "rollout-r")).ok).toBe(true);
    const before = (await rpc.requestCounts()).sql!;
    const admitted = Date.now();
    expect((await rpc.acquire(second, 60_000, "rollout-r", [first])).ok).toBe(true);
    // The ended call's row becomes the new call's: one statement and one row written (billed),
    // where an insert and a delete were two of each.
    const after = (await rpc.requestCounts()).sql!;
    expect(after.statements - before.statements).toBe(1);
    expect(after.rows_written - before.rows_written).toBe(1);
    const stored = await storedRows(raw);
    // Read straight from SQLite, bypassing the shard's memory: the ended call's row went in the
    // admission's own write. Before, it waited up to RELEASE_BATCH_MS for a commit of its own.
    if (Date.now() - admitted < RELEASE_BATCH_MS) expect(stored).toBe(1);
    expect(await rpc.inFlight()).toBe(1);
    expect(await storedRows(raw)).toBe(1);
  });

  it("admits a call already counted again without moving a released row onto it", async () => {
    const { raw, rpc } = freshShard();
    const [a, b] = [uniqueCallId("live-a"), uniqueCallId("live-b")];
    await rpc.acquire(a, 60_000, "rollout-s");
    await rpc.acquire(b, 60_000, "rollout-s");
    // b is admitted again (a retried admission) while a is released with it: b stays one call.
    expect((await rpc.acquire(b, 60_000, "rollout-s", [a])).ok).toBe(true);
    expect(await rpc.inFlight()).toBe(1);
    expect(await storedRows(raw)).toBe(1);
    expect(await rpc.releaseRollout("rollout-s")).toBe(1);
  });

  it("admits a released call id again as a new call under the version in force", async () => {
    const { rpc } = freshShard();
    const id = uniqueCallId("again");
    await rpc.acquire(id, 60_000);
    await rpc.release(id);
    expect((await rpc.acquire(id, 60_000)).ok).toBe(true);
    expect(await rpc.inFlight()).toBe(1);
    await rpc.release(id);
    expect(await rpc.inFlight()).toBe(0);
  });

  it("moves the calls of the earlier table layout into the current one when it starts", async () => {
    const { raw, rpc } = freshShard();
    await rpc.inFlight(); // creates the current tables
    const now = Date.now();
    await runInDurableObject(raw(), (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(
        `CREATE TABLE in_flight (call_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL, acquired_version INTEGER NOT NULL, rollout_id TEXT)`,
      );
      sql.exec(
        `INSERT INTO in_flight VALUES ('legacy-1', ?, 0, 'rollout-old'), ('legacy-2', ?, 0, 'rollout-old'), ('legacy-expired', ?, 0, NULL)`,
        now + 60_000,
        now + 60_000,
        now - 1,
      );
    });
    await restart(raw);
    expect(await rpc.inFlight()).toBe(2);
    const tables = await runInDurableObject(raw(), (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'in_flight%'`,
        )
        .toArray()
        .map((row) => row.name),
    );
    expect(tables).toEqual(["in_flight_calls"]);
    await rpc.release("legacy-1");
    expect(await rpc.releaseRollout("rollout-old")).toBe(1);
    expect(await rpc.inFlight()).toBe(0);
  });

  it("answers a resource's latest version, also when the fence it stored predates fences listing resources", async () => {
    const name = uniqueCallId("shard_res").replace(/-/g, "_");
    const stored = await policy().putResource(name, { text: "v1" });
    expect(stored.ok).toBe(true);
    // A new shard reads the fence, then the version's value.
    expect(await freshShard().rpc.resource(name)).toMatchObject({ ok: true, version: 1 });
    // A shard restarted with the fence it stored before this field existed: the same generation, no resources.
    const { raw, rpc } = freshShard();
    const { resources: _dropped, ...legacy } = await policy().fence();
    await runInDurableObject(raw(), (_instance, state) =>
      writeMetaText(state.storage.sql, "fence", JSON.stringify(legacy)),
    );
    await restart(raw);
    expect(await rpc.resource(name)).toMatchObject({
      ok: true,
      version: 1,
      value: { text: "v1" },
    });
    expect(await rpc.resource(`${name}_none`)).toEqual({ ok: false, reason: "not_found" });
  });
});
