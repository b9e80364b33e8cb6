/** Integration: `GET /v1/rollouts/:id/events` — Server-Sent Events of steps and the end. */
import { describe, expect, it } from "vitest";
import { api, postRollout, runRollout, startRollout, uniqueId } from "../../fixtures/rollouts";
import "../../fixtures/test-agents";

interface SseFrame {
  id?: string;
  event: string;
  data: unknown;
}

/** Parses a whole `text/event-stream` body into frames (comments skipped). */
function parseSse(text: string): SseFrame[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "" && !block.startsWith(":"))
    .map((block) => {
      const fields = new Map(
        block
          .split("\n")
          .map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
      );
      return {
        id: fields.get("id"),
        event: fields.get("event") ?? "message",
        data: JSON.parse(fields.get("data") ?? "null"),
      };
    });
}

async function readEvents(
  rolloutId: string,
  headers: Record<string, string> = {},
  query = "",
): Promise<SseFrame[]> {
  const response = await api(`/v1/rollouts/${rolloutId}/events${query}`, { headers });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  return parseSse(await response.text());
}

const threeSteps = { problem: "Say hello.", extra_args: { done_after: 3 } };

describe("rollout events", () => {
  it("streams one step event per step of a finished rollout, then the end", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sse-done"),
      task: threeSteps,
    });
    const frames = await readEvents(view.rollout_id);
    expect(frames.map((frame) => `${frame.event}:${frame.id}`)).toEqual([
      "step:0",
      "step:1",
      "step:2",
      "end:end",
    ]);
    const first = frames[0]!.data as {
      step: { step_id: string };
      llm_calls: Array<{ call_id: string; completion_tokens: number }>;
    };
    expect(first.step.step_id).toBe(view.trajectory.steps[0]!.step_id);
    expect(first.llm_calls.map((call) => call.call_id)).toEqual(
      view.trajectory.steps[0]!.llm_call_ids,
    );
    expect(first.llm_calls[0]!.completion_tokens).toBe(
      view.llm_calls[0]!.completion_token_ids.length,
    );
    expect(frames.at(-1)!.data).toEqual({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 1,
      error: null,
      steps: 3,
    });
  });

  it("skips the steps up to Last-Event-ID", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sse-resume"),
      task: threeSteps,
    });
    const frames = await readEvents(view.rollout_id, { "last-event-id": "0" });
    expect(frames.map((frame) => `${frame.event}:${frame.id}`)).toEqual([
      "step:1",
      "step:2",
      "end:end",
    ]);
  });

  it("skips the steps up to ?after= as well", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sse-after"),
      task: threeSteps,
    });
    const frames = await readEvents(view.rollout_id, {}, "?after=1");
    expect(frames.map((frame) => frame.id)).toEqual(["2", "end"]);
  });

  it("answers 400 problem+json to a Last-Event-ID that is not a step index", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sse-bad"),
      task: threeSteps,
    });
    const response = await api(`/v1/rollouts/${view.rollout_id}/events`, {
      headers: { "last-event-id": "two" },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ errors: [{ path: "after" }] });
  });

  it("streams a running rollout's steps as they are committed, then ends the stream", async () => {
    const rolloutId = await startRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sse-live"),
      task: { ...threeSteps, extra_args: { done_after: 3, step_sleep_ms: 50 } },
    });
    const frames = await readEvents(rolloutId);
    expect(frames.map((frame) => `${frame.event}:${frame.id}`)).toEqual([
      "step:0",
      "step:1",
      "step:2",
      "end:end",
    ]);
    expect(frames.at(-1)!.data).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
    });
  });

  it("lets a client that dropped the stream of a live rollout reconnect with Last-Event-ID and get exactly the rest", async () => {
    const rolloutId = await startRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sse-reconnect"),
      task: { ...threeSteps, extra_args: { done_after: 4, step_sleep_ms: 300 } },
    });
    // Read up to the first step event, then drop the connection while the rollout still runs.
    const response = await api(`/v1/rollouts/${rolloutId}/events`);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = "";
    while (!/event: step\n/.test(seen)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before a step: ${seen}`);
      seen += value;
    }
    await reader.cancel();
    const first = parseSse(seen.slice(0, seen.lastIndexOf("\n\n") + 2)).filter(
      (frame) => frame.event === "step",
    );
    const lastId = first.at(-1)!.id!;
    expect(
      (await api(`/v1/rollouts/${rolloutId}`).then((r) => r.json())) as { status: string },
    ).toMatchObject({ status: "running" });
    const rest = await readEvents(rolloutId, { "last-event-id": lastId });
    const ids = [...first, ...rest]
      .filter((frame) => frame.event === "step")
      .map((frame) => frame.id);
    expect(ids).toEqual(["0", "1", "2", "3"]);
    expect(rest.at(-1)).toMatchObject({ event: "end", data: { status: "succeeded" } });
  });

  describe("create and follow in one request (stream: true)", () => {
    it("answers 202 with the created answer as the first event, then every step and the end", async () => {
      const rolloutId = uniqueId("sse-create");
      const response = await postRollout({
        agent: "test-loop",
        rollout_id: rolloutId,
        task: { ...threeSteps, extra_args: { done_after: 3, step_sleep_ms: 20 } },
        stream: true,
      });
      expect(response.status).toBe(202);
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      const frames = parseSse(await response.text());
      expect(frames.map((frame) => `${frame.event}:${frame.id}`)).toEqual([
        "created:undefined",
        "step:0",
        "step:1",
        "step:2",
        "end:end",
      ]);
      const created = frames[0]!.data as {
        rollout_id: string;
        created: boolean;
        llm: { base_url: string; api_key: string };
      };
      expect(created).toMatchObject({ rollout_id: rolloutId, created: true });
      expect(created.llm.base_url).toMatch(new RegExp(`/v1/rollouts/${rolloutId}/llm/v1$`));
      expect(created.llm.api_key).toMatch(/^erk\./);
      const view = (await api(`/v1/rollouts/${rolloutId}`).then((r) => r.json())) as {
        status: string;
        trajectory: { steps: unknown[] };
      };
      expect(view).toMatchObject({ status: "succeeded" });
      expect(view.trajectory.steps).toHaveLength(3);
    });

    it("answers the same create sent again with 200, created: false, and the whole stream so far", async () => {
      const body = { agent: "test-loop", rollout_id: uniqueId("sse-again"), task: threeSteps };
      const first = await postRollout({ ...body, stream: true });
      await first.text();
      const again = await postRollout({ ...body, stream: true });
      expect(again.status).toBe(200);
      const frames = parseSse(await again.text());
      expect(frames[0]).toMatchObject({ event: "created", data: { created: false } });
      expect(frames.map((frame) => frame.id).slice(1)).toEqual(["0", "1", "2", "end"]);
      // Without stream, the same create answers JSON: stream is how to answer, not part of the rollout.
      const plain = await postRollout(body);
      expect(plain.status).toBe(200);
      expect(plain.headers.get("content-type")).toMatch(/^application\/json/);
    });

    it("refuses a stream that is not a boolean with 422 naming the field, creating nothing", async () => {
      const rolloutId = uniqueId("sse-bad-stream");
      const response = await postRollout({
        agent: "test-loop",
        rollout_id: rolloutId,
        task: threeSteps,
        stream: "yes",
      });
      expect(response.status).toBe(422);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({ errors: [{ path: "stream" }] });
      expect((await api(`/v1/rollouts/${rolloutId}`)).status).toBe(404);
    });
  });
});
