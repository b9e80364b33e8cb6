/**
 * Integration: a weight sync that begins and ends while a gateway call is in flight. The call is
 * recorded while its admission is released, under the version it was admitted with; the release
 * reports the newer version, and the route corrects the record before it answers. Streamed and
 * non-streamed calls alike, and a stepwise agent's call inside the Worker, whose release runs
 * while its agent and environment work and whose commit waits for it. The rollouts' backend is the slow simulator (1.5 s to first token), so
 * the sync happens while the call waits upstream. The policy object is this file's own.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { api, getRollout, startRollout, waitForEnd } from "../../fixtures/rollouts";

interface PolicyView {
  policy_version: number;
  in_flight: number;
  syncing: unknown;
}

const policy = async (): Promise<PolicyView> =>
  (await (await api("/v1/policy")).json()) as PolicyView;
const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body) });

/** Until a call is admitted and waiting upstream for its first token (the slow simulator holds it 1.5 s). */
async function waitUntilAdmitted(): Promise<void> {
  for (let tries = 0; (await policy()).in_flight === 0; tries += 1) {
    if (tries > 200) throw new Error("the call was never admitted");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  const put = await api("/v1/policy", {
    method: "PUT",
    body: JSON.stringify({
      backend: { name: "vllm", replicas: [`${inject("slowSimulatorUrl")}/v1`] },
    }),
  });
  expect(put.status).toBe(200);
});

describe("a weight sync racing a gateway call", () => {
  it.each([
    ["non-streamed", false],
    ["streamed", true],
  ])(
    "a %s call admitted before the sync and ending after it is recorded as ending under the new version",
    async (_label, stream) => {
      const rollout = await createExternal({ max_tokens_per_call: 4 });
      const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
      const { policy_version: version } = await policy();
      const messages = [{ role: "user" as const, content: "Hello" }];
      const answered = stream
        ? (async () => {
            let text = "";
            for await (const chunk of await client.chat.completions.create({
              model: "any",
              messages,
              stream: true,
            }))
              text += chunk.choices[0]?.delta?.content ?? "";
            return text;
          })()
        : client.chat.completions
            .create({ model: "any", messages })
            .then((reply) => reply.choices[0]!.message.content ?? "");
      await waitUntilAdmitted();
      const begun = (await (await post("/v1/policy/sync/begin", {})).json()) as {
        in_flight: number;
      };
      expect(begun.in_flight).toBe(1); // the trainer goes ahead anyway: its wait for calls in flight is its own choice
      expect((await post("/v1/policy/sync/end", { policy_version: version + 1 })).status).toBe(200);

      expect((await answered).length).toBeGreaterThan(0);
      const [call] = (await getRollout(rollout.rollout_id)).llm_calls;
      expect(call).toMatchObject({
        policy_version_start: version,
        policy_version_end: version + 1,
      });
      expect((await policy()).in_flight).toBe(0);
    },
  );

  it("a stepwise agent's call admitted before the sync and ending after it is committed as ending under the new version", async () => {
    const { policy_version: version } = await policy();
    const rolloutId = await startRollout({
      agent: "calculator",
      task: { problem: "What is 2 + 3?", ground_truth: "5" },
      config: { max_steps: 1, max_tokens_per_call: 8 },
    });
    await waitUntilAdmitted();
    expect(
      (await (await post("/v1/policy/sync/begin", {})).json()) as { in_flight: number },
    ).toMatchObject({ in_flight: 1 });
    expect((await post("/v1/policy/sync/end", { policy_version: version + 1 })).status).toBe(200);

    const view = await waitForEnd(rolloutId, 30_000);
    expect(view.llm_calls[0]).toMatchObject({
      policy_version_start: version,
      policy_version_end: version + 1,
    });
    expect((await policy()).in_flight).toBe(0);
  });
});
