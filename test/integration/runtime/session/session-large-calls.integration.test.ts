/** Integration: calls longer than a SQLite value (~2 MB) are recorded whole, and storage does not grow with calls × context. */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createExternal, openaiFor } from "../../../fixtures/external-rollouts";
import { createByHand, fakeCommit } from "../../../fixtures/hand-session";
import { SessionStore } from "../../../../src/runtime/session/kernel";
import { getRollout, runRollout, uniqueId } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

/**
 * One token per repeat in the simulator's Qwen3 vocabulary (`Ġresponsibilities`, id 27323), about
 * 23 bytes of JSON each (17 of text, 6 of id): 120,000 repeats make a prompt of ~120k tokens and a
 * record over 2 MB.
 */
const PIECE = " responsibilities";
const REPEATS = 120_000;
// Each call at most 16 tokens: the simulator's reply length varies with what it served before, and
// two replies must fit the rollout's 64-token response budget whatever order the suite runs in.
const config = { max_prompt_length: 131_072, max_response_length: 64, max_tokens_per_call: 16 };

/** Bytes of the session's stored call and step text (rows plus their extra parts). */
async function storedBytes(rolloutId: string): Promise<{ calls: number; parts: number }> {
  const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
  return runInDurableObject(stub, (_instance, state) => {
    const one = (query: string) =>
      Number(state.storage.sql.exec<{ n: number | null }>(query).toArray()[0]?.n ?? 0);
    return {
      calls: one(`SELECT SUM(length(body)) AS n FROM llm_calls`),
      parts: one(`SELECT SUM(length(text)) AS n FROM value_parts`),
    };
  });
}

describe("calls over SQLite's value limit (integration)", () => {
  it("records an external rollout's 120k-token calls, each later call stored as what the one before lacks", async () => {
    const rollout = await createExternal(config);
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const question = { role: "user" as const, content: PIECE.repeat(REPEATS) };
    const first = await client.chat.completions.create({ model: "any", messages: [question] });
    const followUp = [
      question,
      first.choices[0]!.message,
      { role: "user" as const, content: "And now?" },
    ];
    await client.chat.completions.create({ model: "any", messages: followUp as never });
    const view = await getRollout(rollout.rollout_id);
    expect(view.llm_calls).toHaveLength(2);
    const [one, two] = view.llm_calls;
    expect(one!.prompt_token_ids.length).toBeGreaterThan(REPEATS);
    expect(JSON.stringify(one).length).toBeGreaterThan(2 * 1024 * 1024);
    expect(
      two!.prompt_token_ids.slice(
        0,
        one!.prompt_token_ids.length + one!.completion_token_ids.length,
      ),
    ).toEqual([...one!.prompt_token_ids, ...one!.completion_token_ids]);
    expect(two!.request.messages).toEqual(
      followUp.map((message) => expect.objectContaining({ role: message.role })),
    );
    const bytes = await storedBytes(rollout.rollout_id);
    // Two calls of > 2 MB each, stored in little more than one.
    expect(bytes.calls + bytes.parts).toBeLessThan(1.2 * JSON.stringify(one).length);
    expect(bytes.parts).toBeGreaterThan(0);
  }, 60_000);

  it("commits a driven step whose call carries a 120k-token prompt instead of failing and re-running it", async () => {
    const rolloutId = uniqueId("long-prompt");
    const view = await runRollout(
      {
        agent: "test-loop",
        rollout_id: rolloutId,
        task: {
          problem: "Say hello.",
          extra_args: { done_after: 2, long_observation: { text: PIECE, times: REPEATS } },
        },
        config,
      },
      60_000,
    );
    expect([view.status, view.termination_reason, view.error]).toEqual([
      "succeeded",
      "ENV_DONE",
      null,
    ]);
    expect(view.trajectory.steps).toHaveLength(2);
    expect(view.llm_calls).toHaveLength(2);
    expect(view.llm_calls.map((call) => call.attempts)).toEqual([1, 1]);
    expect(view.llm_calls[1]!.prompt_token_ids.length).toBeGreaterThan(REPEATS);
    // The long observation itself is stored in a step (over several parts) and read back whole.
    const observationLengths = view.trajectory.steps.map((step) =>
      typeof step.observation === "string" ? step.observation.length : 0,
    );
    expect(observationLengths).toContain(PIECE.length * REPEATS);
  }, 60_000);

  it("commits a step whose body and env snapshot are each 1.4 MB of 3-byte characters (one row holds the first part of each)", async () => {
    const rolloutId = uniqueId("wide-step");
    const session = await createByHand(rolloutId);
    const leased = await session.lease("driver-a");
    if (!leased.ok) throw new Error(`lease refused: ${leased.reason}`);
    const wide = "€".repeat(480_000); // 1.44 MB of UTF-8
    const commit = fakeCommit(rolloutId, 0);
    commit.step = { ...commit.step, observation: wide };
    commit.env_snapshot = { board: wide };
    expect(await session.commitStep(leased.lease.lease_id, commit)).toMatchObject({
      ok: true,
      duplicate: false,
    });
    const view = await getRollout(rolloutId);
    expect(view.trajectory.steps[0]!.observation).toBe(wide);
  }, 60_000);

  it("stores a spec and a final conversation over SQLite's value limit (a long prompt, a workflow's long history)", async () => {
    const rolloutId = uniqueId("long-meta");
    const problem = "€".repeat(800_000); // 2.4 MB of UTF-8
    const session = await createByHand(rolloutId, { task: { problem } });
    const leased = await session.lease("driver-a");
    if (!leased.ok) throw new Error(`lease refused: ${leased.reason}`);
    const messages = [
      { role: "user" as const, content: problem },
      { role: "assistant" as const, content: "ok" },
    ];
    expect(
      await session.finish(leased.lease.lease_id, {
        termination_reason: "ENV_DONE",
        reward: 1,
        error: null,
        messages,
      }),
    ).toMatchObject({ ok: true, status: "succeeded" });
    const view = await getRollout(rolloutId);
    expect(view.final_messages).toEqual(messages);
    const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
    await runInDurableObject(stub, (_instance, state) => state.abort("test restart")).catch(
      () => undefined,
    );
    const spec = await runInDurableObject(
      env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId)),
      (_instance, state) => SessionStore.for(state.storage.sql).readSpec(),
    );
    expect(spec?.task.problem).toBe(problem);
  }, 60_000);
});
