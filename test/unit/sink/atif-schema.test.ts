import { describe, expect, it } from "vitest";
import { AtifTrajectory, validateAtif } from "../../../src/sink/formats/atif-schema";

/** A small valid document: system, user, an agent step calling a tool with its result, a final answer. */
function validDoc(): Record<string, any> {
  return {
    schema_version: "ATIF-v1.7",
    session_id: "s-1",
    agent: { name: "calculator", version: "1" },
    steps: [
      { step_id: 1, source: "system", message: "Use the calculate tool." },
      { step_id: 2, source: "user", message: "What is 6 * 7?", timestamp: "2026-01-02T03:04:05Z" },
      {
        step_id: 3,
        source: "agent",
        message: "",
        model_name: "sim-qwen3",
        tool_calls: [
          { tool_call_id: "c1", function_name: "calculate", arguments: { expression: "6 * 7" } },
        ],
        observation: { results: [{ source_call_id: "c1", content: "42" }] },
        metrics: {
          prompt_tokens: 3,
          completion_tokens: 2,
          prompt_token_ids: [1, 2, 3],
          completion_token_ids: [4, 5],
          logprobs: [-0.1, -0.2],
        },
      },
      { step_id: 4, source: "agent", message: "\\boxed{42}", llm_call_count: 1 },
    ],
    extra: { reward: 1 },
  };
}

function issuesAfter(
  breakIt: (doc: Record<string, any>) => void,
): Array<{ path: string; message: string }> {
  const doc = validDoc();
  breakIt(doc);
  return validateAtif(doc);
}

describe("validateAtif", () => {
  it("accepts a valid document and reports no issues", () => {
    expect(validateAtif(validDoc())).toEqual([]);
    expect(() => AtifTrajectory.parse(validDoc())).not.toThrow();
  });

  it("rejects step ids that do not run 1, 2, 3, …", () => {
    const issues = issuesAfter((doc) => {
      doc.steps[2].step_id = 7;
    });
    expect(issues).toEqual([
      {
        path: "steps.2.step_id",
        message: "step_id is 7 but steps must be numbered 1, 2, 3, … (expected 3)",
      },
    ]);
  });

  it("rejects an observation whose source_call_id matches no tool call", () => {
    const issues = issuesAfter((doc) => {
      doc.steps[2].observation.results[0].source_call_id = "nope";
    });
    expect(issues).toEqual([
      {
        path: "steps.2.observation.results.0.source_call_id",
        message: 'source_call_id "nope" matches no tool_call_id of this or an earlier agent step',
      },
    ]);
  });

  it("rejects an observation that answers a tool call made only later", () => {
    const issues = issuesAfter((doc) => {
      doc.steps[1].source = "system";
      doc.steps[1].observation = { results: [{ source_call_id: "c1", content: "early" }] };
    });
    expect(issues.map((issue) => issue.path)).toEqual([
      "steps.1.observation.results.0.source_call_id",
    ]);
  });

  it("rejects tool_calls, metrics and model_name on non-agent steps", () => {
    const issues = issuesAfter((doc) => {
      doc.steps[1].tool_calls = [{ tool_call_id: "u1", function_name: "calculate", arguments: {} }];
      doc.steps[0].metrics = { prompt_tokens: 1 };
      doc.steps[0].model_name = "m";
    });
    expect(issues).toContainEqual({
      path: "steps.1.tool_calls",
      message: "tool_calls is only allowed on agent steps (step 2 is a user step)",
    });
    expect(issues).toContainEqual({
      path: "steps.0.metrics",
      message: "metrics is only allowed on agent steps (step 1 is a system step)",
    });
    expect(issues).toContainEqual({
      path: "steps.0.model_name",
      message: "model_name is only allowed on agent steps (step 1 is a system step)",
    });
  });

  it("rejects another schema version, unknown fields and a bad source", () => {
    expect(issuesAfter((doc) => (doc.schema_version = "ATIF-v1.6"))).toEqual([
      { path: "schema_version", message: 'schema_version must be "ATIF-v1.7"' },
    ]);
    expect(issuesAfter((doc) => (doc.steps[0].reward = 1)).map((issue) => issue.path)).toEqual([
      "steps.0",
    ]);
    expect(issuesAfter((doc) => (doc.steps[0].source = "tool")).map((issue) => issue.path)).toEqual(
      ["steps.0.source"],
    );
  });

  it("rejects logprobs that do not line up with the completion ids, and metrics on a no-LLM step", () => {
    expect(issuesAfter((doc) => doc.steps[2].metrics.logprobs.pop())).toEqual([
      {
        path: "steps.2.metrics.logprobs",
        message: "logprobs has 1 entries but completion_token_ids has 2",
      },
    ]);
    const noLlm = issuesAfter((doc) => (doc.steps[2].llm_call_count = 0));
    expect(noLlm).toEqual([
      {
        path: "steps.2.metrics",
        message: "metrics must be absent on a step with llm_call_count 0 (step 3)",
      },
    ]);
  });

  it("checks tool call arguments are objects and timestamps are ISO 8601", () => {
    expect(
      issuesAfter((doc) => (doc.steps[2].tool_calls[0].arguments = "6 * 7")).map(
        (issue) => issue.path,
      ),
    ).toEqual(["steps.2.tool_calls.0.arguments"]);
    expect(
      issuesAfter((doc) => (doc.steps[1].timestamp = "yesterday")).map((issue) => issue.path),
    ).toEqual(["steps.1.timestamp"]);
  });

  it("validates embedded subagents: unique trajectory ids and resolvable refs", () => {
    const sub = {
      schema_version: "ATIF-v1.7",
      trajectory_id: "sub-1",
      agent: { name: "helper", version: "1" },
      steps: [{ step_id: 1, source: "user", message: "hi" }],
    };
    const withSub = (doc: Record<string, any>, subs: unknown[], refId: string) => {
      doc.subagent_trajectories = subs;
      doc.steps[2].observation.results.push({
        source_call_id: "c1",
        subagent_trajectory_ref: [{ trajectory_id: refId }],
      });
    };
    expect(issuesAfter((doc) => withSub(doc, [sub], "sub-1"))).toEqual([]);
    expect(
      issuesAfter((doc) => withSub(doc, [sub], "sub-2")).map((issue) => issue.message),
    ).toEqual(['trajectory_id "sub-2" matches no embedded subagent trajectory']);
    expect(
      issuesAfter((doc) => withSub(doc, [sub, sub], "sub-1")).map((issue) => issue.message),
    ).toEqual(['trajectory_id "sub-1" is used by two embedded subagents']);
    expect(
      issuesAfter((doc) =>
        withSub(doc, [{ ...sub, steps: [{ step_id: 2, source: "user", message: "hi" }] }], "sub-1"),
      ).map((issue) => issue.path),
    ).toEqual(["subagent_trajectories.0.steps.0.step_id"]);
  });
});
