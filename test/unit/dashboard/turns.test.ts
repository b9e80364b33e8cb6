import { describe, expect, it } from "vitest";
import { turns } from "../../../functions/dashboard/components/turns";
import { LlmCall } from "../../../src/schemas/llm-call";
import type { RolloutView } from "../../../src/schemas/rollout-api";

function call(id: string, attempt: number, excluded: boolean, content: string): LlmCall {
  return LlmCall.parse({
    call_id: id,
    rollout_id: "r",
    request: { messages: [{ role: "user", content: "Add 2 and 2." }] },
    response_message: { role: "assistant", content },
    prompt_token_ids: [1, 2],
    completion_token_ids: [3],
    logprobs: [-0.1],
    logprobs_mode: "processed_logprobs",
    finish_reason: "stop",
    usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    backend: "vllm",
    replica: "http://sim/v1",
    latency_ms: 1,
    trainable: true,
    created_at: 0,
    attempt,
    excluded_from_training: excluded,
  });
}

describe("turns (unit)", () => {
  it("groups calls by attempt and greys the attempt a retry replaced, with its calls", async () => {
    const view = {
      llm_calls: [call("c1", 1, true, "<crashed>"), call("c2", 2, false, "4")],
      trajectory: { steps: [] },
      final_messages: null,
      final_attempt: 2,
    } as unknown as RolloutView;
    const html = String(await turns(view));
    expect(html).toMatch(/<h3 class="attempt excluded" data-attempt="1">attempt 1 · excluded/);
    expect(html).toMatch(/<h3 class="attempt" data-attempt="2">attempt 2 · final/);
    expect(html).toMatch(/<div class="turn excluded" data-call-id="c1"/);
    expect(html).toMatch(/<div class="turn" data-call-id="c2"/);
    expect(html).toContain("not trained: abandoned_attempt");
  });

  it("escapes what the model wrote", async () => {
    const view = {
      llm_calls: [call("c1", 1, false, "<script>alert(1)</script>")],
      trajectory: { steps: [] },
      final_messages: null,
      final_attempt: 1,
    } as unknown as RolloutView;
    const html = String(await turns(view));
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
  });
});
