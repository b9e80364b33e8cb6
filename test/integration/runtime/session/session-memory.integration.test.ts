/**
 * Integration: what a session keeps in memory (its state, the last call) never disagrees with its
 * SQLite rows: not after a write by another part of the object, and not after a transaction that
 * rolled back.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionKernel, SessionStore } from "../../../../src/runtime/session/kernel";
import { LlmCall } from "../../../../src/schemas/llm-call";
import { createByHand, expireLease, fakeCommit, readState } from "../../../fixtures/hand-session";
import { uniqueId } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

function objectOf(rolloutId: string): DurableObjectStub {
  return env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
}

/** A kernel over the object's own storage, as the Durable Object builds it. */
function kernelOver(storage: DurableObjectStorage): SessionKernel {
  return new SessionKernel({
    storage: {
      sql: storage.sql,
      transactionSync: (fn) => storage.transactionSync(fn),
      setAlarm: (time) => storage.setAlarm(time),
    },
    queue: { send: async () => undefined },
    now: () => Date.now(),
  });
}

describe("a session's memory of its storage", () => {
  it("sees a state written by another part of the object after its own RPCs read it", async () => {
    const rolloutId = uniqueId("memory-shared");
    const session = await createByHand(rolloutId);
    const first = await session.lease("driver-a");
    expect(first.ok).toBe(true);
    // The object has now read and written its state over RPC; the lease is expired behind it.
    await expireLease(rolloutId);
    const second = await session.lease("driver-b");
    expect(second).toMatchObject({ ok: true });
    expect(second.ok && first.ok && second.lease.lease_id).not.toBe(
      first.ok && first.lease.lease_id,
    );
    expect((await readState(rolloutId)).lease?.driver_id).toBe("driver-b");
  });

  it("forgets a state written inside a transaction that rolled back, and reads the stored one", async () => {
    const rolloutId = uniqueId("memory-rollback");
    await createByHand(rolloutId);
    await runInDurableObject(objectOf(rolloutId), (_instance, state) => {
      const kernel = kernelOver(state.storage);
      const before = kernel.state!;
      expect(() =>
        kernel.deps.storage.transactionSync(() => {
          kernel.save({ ...before, step_count: 99 });
          expect(kernel.state!.step_count).toBe(99); // inside, the write is visible
          throw new Error("the commit failed after writing");
        }),
      ).toThrow("the commit failed after writing");
      expect(kernel.state!.step_count).toBe(before.step_count);
      expect(kernel.state).toEqual(before);
    });
    expect((await readState(rolloutId)).step_count).toBe(0);
  });

  it("encodes the next call against the last stored call, not one a rolled-back transaction inserted, and stores a call id once", async () => {
    const rolloutId = uniqueId("memory-calls");
    await createByHand(rolloutId);
    const [first, lost, next] = [0, 1, 2].map((index) =>
      LlmCall.parse(fakeCommit(rolloutId, index).llm_calls[0]),
    );
    const longer = (call: LlmCall, words: string): LlmCall => ({
      ...call,
      request: {
        ...call.request,
        messages: [...(call.request.messages as unknown[]), { role: "user", content: words }],
      },
    });
    await runInDurableObject(objectOf(rolloutId), (_instance, state) => {
      const kernel = kernelOver(state.storage);
      kernel.store.insertCall(first!);
      expect(() =>
        kernel.deps.storage.transactionSync(() => {
          kernel.store.insertCall(longer(lost!, "a turn that was rolled back"));
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      kernel.store.insertCall(longer(next!, "the next turn"));
      kernel.store.insertCall(first!); // a call id stored before (a retried record) adds nothing
      const calls = SessionStore.for(state.storage.sql).listCalls();
      expect(calls.map((call) => call.call_id)).toEqual([first!.call_id, next!.call_id]);
      const messages = calls[1]!.request.messages as unknown[];
      expect(messages.at(-1)).toEqual({ role: "user", content: "the next turn" });
      expect(messages).toHaveLength(2);
    });
  });
});
