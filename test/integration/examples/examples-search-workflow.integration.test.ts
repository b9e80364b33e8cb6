/** Integration: examples/search-workflow, an Osmosis-style workflow with a tool loop and a separate grader. */
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { AnswerGrader } from "../../../examples/search-workflow/answer-grader";
import {
  runSearchTool,
  SEARCH_TASKS,
  searchCorpus,
} from "../../../examples/search-workflow/corpus";
import {
  SEARCH_SYSTEM_PROMPT,
  SearchWorkflow,
  type SearchConfig,
} from "../../../examples/search-workflow/search-workflow";
import { searchWorkflow } from "../../../examples/search-workflow/search-workflow.agent";
import type {
  ChatMessage,
  GraderContext,
  JsonValue,
  WorkflowContext,
  WorkflowSample,
} from "../../../src/sdk";
import { runRollout, uniqueId } from "../../fixtures/rollouts";
import { scriptedChat, type ScriptedTurn } from "../../unit/integrations/scripted-chat";
import { expectOneSample, expectTokenLevelCalls } from "../fixtures/examples-fixtures";

const [batchQuestion] = SEARCH_TASKS;
const config = searchWorkflow.config;

/** Runs the workflow class on a scripted model (no gateway), as the engine would call it. */
async function runScripted(
  turns: ScriptedTurn[],
): Promise<{ messages: ChatMessage[]; metrics: Record<string, number> }> {
  const chat = scriptedChat(turns);
  const openai = new OpenAI({
    baseURL: "http://scripted/v1",
    apiKey: "k",
    fetch: chat.fetch as never,
    maxRetries: 0,
  });
  const llm = {
    base_url: "http://scripted/v1",
    api_key: "k",
    model: "sim-qwen3",
    openai,
    fetch: chat.fetch,
    sampling_parameters: { temperature: 1, top_p: 1, seed: null },
  };
  const ctx = {
    prompt: [{ role: "user", content: batchQuestion!.problem }],
    metadata: {},
    config,
    llm,
    signal: new AbortController().signal,
  } as unknown as WorkflowContext<SearchConfig>;
  return (await new SearchWorkflow().run(ctx)) as {
    messages: ChatMessage[];
    metrics: Record<string, number>;
  };
}

/** The grader's reward for a sample and a label. */
async function grade(sample: WorkflowSample, label: JsonValue): Promise<number | null> {
  let reward: number | null = null;
  await new AnswerGrader().grade({
    label,
    sample,
    metadata: {},
    config,
    setReward: (value: number) => void (reward = value),
  } as unknown as GraderContext<SearchConfig>);
  return reward;
}

describe("examples/search-workflow (integration)", () => {
  it("finds the document that answers each question first", () => {
    expect(SEARCH_TASKS.map((task) => searchCorpus(task.problem, 1)[0]?.id)).toEqual([
      "work-queue",
      "gateway-keys",
      "attempts",
    ]);
    expect(runSearchTool("open_document", '{"id": "nope"}', 3)).toBe('error: no document "nope"');
  });

  it("searches, opens and answers on a scripted model, and the grader rewards a grounded right answer", async () => {
    const output = await runScripted([
      { tool: "search", args: { query: "work queue batch messages" } },
      { tool: "open_document", args: { id: "work-queue" } },
      { text: "At most \\boxed{6} messages." },
    ]);
    expect(output.metrics).toEqual({ turns: 3, searches: 1, opens: 1 });
    expect(
      output.messages
        .filter((message) => message.role === "tool")
        .map((message) => JSON.parse(message.content as string)),
    ).toEqual([
      searchCorpus("work queue batch messages", 3),
      expect.objectContaining({ id: "work-queue" }),
    ]);
    expect(await grade(output, "6")).toBe(1);
    expect(await grade(output, "5")).toBe(0);
  });

  it("gives a right answer that no tool result supports only the ungrounded reward", async () => {
    const output = await runScripted([{ text: "I think \\boxed{6}." }]);
    expect(output.metrics).toEqual({ turns: 1, searches: 0, opens: 0 });
    expect(await grade(output, "6")).toBe(config.ungrounded_reward);
  });

  it("runs end to end through POST /v1/rollouts: the sample is kept, the grader's reward is the rollout's", async () => {
    const view = await runRollout({
      agent: "search-workflow",
      rollout_id: uniqueId("search"),
      task: batchQuestion!,
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      attempts: 1,
    });
    expect(view.llm_calls[0]!.request.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ function: expect.objectContaining({ name: "search" }) }),
      ]),
    );
    expect(view.final_messages?.slice(0, 2)).toEqual([
      { role: "system", content: SEARCH_SYSTEM_PROMPT },
      { role: "user", content: batchQuestion!.problem },
    ]);
    expect(view.final_messages).toHaveLength(
      2 +
        view.llm_calls.length +
        view.llm_calls.reduce(
          (total, call) => total + (call.response_message.tool_calls?.length ?? 0),
          0,
        ),
    );
    const metrics = view.spans.find((span) => span.name === "metrics")!.value as Record<
      string,
      number
    >;
    expect(metrics.turns).toBe(view.llm_calls.length);
    const graderReward = view.spans.find((span) => span.name === "grader");
    expect(graderReward).toMatchObject({ kind: "reward", value: view.reward });
    expect(view.reward).toBe(
      await grade({ messages: view.final_messages!, metrics }, batchQuestion!.ground_truth),
    );
    expectTokenLevelCalls(view);
    await expectOneSample(view);
  });
});
