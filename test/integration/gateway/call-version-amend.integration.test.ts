/**
 * Integration: the HTTP gateway records a call while releasing its admission, with the version the
 * call was admitted under; `amendCallVersion` corrects that version when a weight sync ended
 * while the call ran. The correction changes only that field, and later calls still decode.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SessionStore } from "../../../src/runtime/session/kernel";
import { LlmCall } from "../../../src/schemas/llm-call";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { fakeCommit, sessionOf } from "../../fixtures/hand-session";
import { getRollout, uniqueId } from "../../fixtures/rollouts";

describe("correcting the version a gateway call ended under", () => {
  it("records a gateway call under its admitted version, and amends only its policy_version_end", async () => {
    const rollout = await createExternal({ max_tokens_per_call: 8 });
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const first = await client.chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "Hello" }],
    });
    const [recorded] = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(recorded!.policy_version_end).toBe(recorded!.policy_version_start);

    const session = sessionOf(rollout.rollout_id);
    const end = recorded!.policy_version_start + 2;
    expect(await session.amendCallVersion(recorded!.call_id, end)).toEqual({ ok: true });
    // A later call is stored against the amended one, and both read back whole.
    await client.chat.completions.create({
      model: "any",
      messages: [
        { role: "user", content: "Hello" },
        first.choices[0]!.message,
        { role: "user", content: "Again" },
      ] as never,
    });
    const [amended, next] = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(amended).toEqual({ ...recorded, policy_version_end: end });
    expect(next!.prompt_token_ids.slice(0, amended!.prompt_token_ids.length)).toEqual(
      amended!.prompt_token_ids,
    );
    expect((next!.request.messages as unknown[]).length).toBe(3);
  });

  it("refuses a version that is negative, older than the call's start, or for a call it does not hold, and changes nothing", async () => {
    const rollout = await createExternal();
    const session = sessionOf(rollout.rollout_id);
    expect(await session.amendCallVersion("no-such-call", 3)).toMatchObject({
      ok: false,
      reason: "not_found",
    });
    expect(await session.amendCallVersion("no-such-call", -1)).toMatchObject({
      ok: false,
      reason: "invalid",
      message: expect.stringContaining("policy_version_end"),
    });

    const rolloutId = uniqueId("amend-older");
    const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
    const call = LlmCall.parse({
      ...fakeCommit(rolloutId, 0).llm_calls[0],
      policy_version_start: 2,
      policy_version_end: 2,
    });
    await runInDurableObject(stub, (_instance, state) => {
      const store = SessionStore.for(state.storage.sql);
      store.migrate();
      store.insertCall(call);
      expect(store.setCallVersionEnd(call.call_id, 1)).toBe("older");
      expect(store.setCallVersionEnd("missing", 3)).toBe("missing");
      expect(store.listCalls()).toEqual([call]);
      expect(store.setCallVersionEnd(call.call_id, 3)).toBe("set");
      expect(store.listCalls()).toEqual([{ ...call, policy_version_end: 3 }]);
    });
  });
});
