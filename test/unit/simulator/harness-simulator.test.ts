import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type VllmSimulator,
  parseHermesOutput,
  startVllmSimulator,
} from "../../../tools/simulator";
import { FINAL_ANSWER, harnessSucceeds } from "../../../tools/simulator/harness-script";
import { CLAUDE_BASH, OPENCODE_BASH, READ_TOOL, TASKS, writeTaskDir } from "./harness-task-dir";
import { jsonChunks, postJson, postSse } from "./simulator-fixtures";

const TASK = TASKS["make-answer"]!;
const KEY = { "x-sample-key": "3:1" };
const opening = [
  { role: "system", content: "You are opencode, a coding agent." },
  { role: "user", content: `<env>cwd: /tmp/ws</env>\n${TASK.instruction}` },
];

describe("the simulator inside an agent harness (chat)", () => {
  let sim: VllmSimulator;
  let url: string;
  const harnessTasks = writeTaskDir();
  const expected = harnessSucceeds(
    { seed: 4, harnessSuccessRate: 0.5 },
    "make-answer",
    KEY["x-sample-key"],
  )
    ? TASK.solve
    : TASK.wrong;

  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 4, harnessTasks, harnessSuccessRate: 0.5 });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("calls the request's own shell tool with the task's script", async () => {
    const request = { messages: opening, tools: [READ_TOOL, OPENCODE_BASH] };
    const { body } = await postJson(url, request, KEY);
    const choice = body.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    expect(choice.message.tool_calls[0].function.name).toBe("bash");
    expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual({
      command: expected,
      description: "Run the solution",
    });
    // Every call of the rollout agrees, whatever its request seed.
    const again = await postJson(url, { ...request, seed: 99 }, KEY);
    expect(again.body.choices[0].message.tool_calls[0].function.arguments).toBe(
      choice.message.tool_calls[0].function.arguments,
    );
  });

  it("streams the same call", async () => {
    const request = { messages: opening, tools: [CLAUDE_BASH], stream: true };
    const chunks = jsonChunks(await postSse(url, request, KEY));
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0].function.name).toBe("Bash");
    const args = calls.map((call: any) => call.function.arguments ?? "").join("");
    expect(JSON.parse(args)).toEqual({ command: expected });
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });

  it("answers in text once the tool result is back", async () => {
    const messages = [
      ...opening,
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "Bash", arguments: JSON.stringify({ command: expected }) },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "" },
    ];
    const { body } = await postJson(url, { messages, tools: [CLAUDE_BASH] }, KEY);
    expect(body.choices[0].message.content).toBe(FINAL_ANSWER);
    expect(body.choices[0].message.tool_calls).toBeUndefined();
    expect(body.choices[0].finish_reason).toBe("stop");
  });

  it("answers a side call without tools as it would without harness tasks", async () => {
    const request = {
      messages: [{ role: "user", content: `Generate a title for: ${TASK.instruction}` }],
      seed: 7,
    };
    const withTasks = await postJson(url, request, KEY);
    sim.configure({ harnessTasks: null });
    const without = await postJson(url, request, KEY);
    sim.configure({ harnessTasks });
    expect(withTasks.status).toBe(200);
    expect(withTasks.body.choices[0].message).toEqual(without.body.choices[0].message);
  });
});

describe("the simulator inside an agent harness (completions from Qwen3 ids)", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    const harnessTasks = writeTaskDir();
    sim = await startVllmSimulator({ port: 0, tokenizer: "qwen3", harnessTasks });
  });
  afterAll(() => sim.close());

  const complete = async (messages: unknown[], kwargs: Record<string, unknown> = {}) => {
    const rendered = await postJson(`${sim.url}/tokenize`, {
      messages,
      tools: [CLAUDE_BASH],
      chat_template_kwargs: kwargs,
    });
    const { body } = await postJson(
      `${sim.url}/v1/completions`,
      { prompt: rendered.body.tokens, max_tokens: 400 },
      KEY,
    );
    return body.choices[0].text as string;
  };

  it("writes the shell call as a hermes block the gateway parses", async () => {
    const text = await complete(opening);
    expect(text).toMatch(/^<tool_call>\n\{"name": "Bash", "arguments": \{"command": /);
    const parsed = parseHermesOutput(text);
    expect(parsed.toolCalls).toHaveLength(1);
    expect([TASK.solve, TASK.wrong]).toContain(parsed.toolCalls[0]!.arguments.command);
  });

  it("continues a turn Qwen3's template opened with an empty think block", async () => {
    const text = await complete(opening, { enable_thinking: false });
    expect(parseHermesOutput(text).toolCalls[0]?.name).toBe("Bash");
  });

  it("finishes in text after the tool response", async () => {
    const call = { command: TASK.solve };
    const text = await complete([
      ...opening,
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: { name: "Bash", arguments: JSON.stringify(call) },
          },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "" },
    ]);
    expect(text).toBe(FINAL_ANSWER);
  });
});
