import { exports } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { getRollout } from "../../fixtures/rollouts";

describe("upstream refusals through the rollout gateway (integration)", () => {
  it("answers the model server's 400 as a 400 problem the openai client does not retry", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    // vLLM refuses stream_options on a non-streaming request with its own 400.
    const error = await client.chat.completions
      .create({
        model: "any",
        messages: [{ role: "user", content: "What is 1 + 1?" }],
        stream_options: { include_usage: true },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).status).toBe(400);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(
      "Stream options can only be defined",
    );
    const view = await getRollout(rollout.rollout_id);
    expect(view.llm_calls).toHaveLength(0);
    expect(view.status).toBe("running");
  });

  it("serves the problem as application/problem+json with the upstream's status", async () => {
    const rollout = await createExternal();
    const response = await exports.default.fetch(`${rollout.llm.base_url}/chat/completions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${rollout.llm.api_key}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        messages: [{ role: "user", content: "hi" }],
        stream_options: { include_usage: true },
      }),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    expect(await response.json()).toMatchObject({
      status: 400,
      type: "urn:edge-rollout:problem:upstream_rejected_request",
    });
  });
});
