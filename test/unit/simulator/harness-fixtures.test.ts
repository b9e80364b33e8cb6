/**
 * The harness script over request bodies captured from the real CLIs
 * (test/fixtures/harness-requests/<harness>/): each is turned into turns and tools the way the
 * gateway's translators do (roughly: this test needs the text and the tool schemas only).
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { FINAL_ANSWER, harnessAnswer } from "../../../tools/simulator/harness-script";
import type { ScriptTurn } from "../../../tools/simulator/scripted-answers";
import type { OfferedTool } from "../../../tools/simulator/shell-tool";
import { writeTaskDir } from "./harness-task-dir";
import { jsonChunks, postSse } from "./simulator-fixtures";

const FIXTURES = join(import.meta.dirname, "../../fixtures/harness-requests");
const SOLVE = "#!/bin/bash\necho 42 > answer.txt\n";
const config = {
  seed: 0,
  harnessSuccessRate: 1,
  harnessTasks: writeTaskDir({
    "answer-42": { instruction: "create answer.txt containing 42\n", solve: SOLVE },
  }),
};

type Json = any;
const text = (content: Json): string =>
  typeof content === "string"
    ? content
    : content
        .filter((part: Json) => typeof part.text === "string")
        .map((part: Json) => part.text)
        .join("\n");

/** Anthropic Messages: tool_result blocks become tool turns, before the user's own text. */
function fromMessages(body: Json): { turns: ScriptTurn[]; tools: OfferedTool[] } {
  const turns: ScriptTurn[] = [{ role: "system", content: text(body.system ?? "") }];
  for (const message of body.messages) {
    const blocks = typeof message.content === "string" ? [] : message.content;
    for (const block of blocks)
      if (block.type === "tool_result") turns.push({ role: "tool", content: text(block.content) });
    turns.push({ role: message.role, content: text(message.content) });
  }
  const tools = body.tools
    .filter((tool: Json) => tool.input_schema)
    .map((tool: Json) => ({ function: { name: tool.name, parameters: tool.input_schema } }));
  return { turns, tools };
}

/** OpenAI Responses: developer messages are system turns, function_call_output tool turns. */
function fromResponses(body: Json): { turns: ScriptTurn[]; tools: OfferedTool[] } {
  const turns: ScriptTurn[] = [];
  for (const item of body.input) {
    if (item.type === "message")
      turns.push({
        role: item.role === "developer" ? "system" : item.role,
        content: text(item.content),
      });
    if (item.type === "function_call") turns.push({ role: "assistant", content: "" });
    if (item.type === "function_call_output") turns.push({ role: "tool", content: item.output });
  }
  const tools = body.tools
    .filter((tool: Json) => tool.type === "function")
    .map((tool: Json) => ({ function: { name: tool.name, parameters: tool.parameters } }));
  return { turns, tools };
}

/** Chat Completions (opencode): as the simulator reads any chat request. */
function fromChat(body: Json): { turns: ScriptTurn[]; tools: OfferedTool[] } {
  const turns = body.messages.map((message: Json) => ({
    role: message.role === "developer" ? "system" : message.role,
    content: text(message.content ?? ""),
  }));
  return { turns, tools: body.tools ?? [] };
}

const HARNESSES = [
  { name: "claude-code", read: fromMessages, args: { command: SOLVE }, tool: "Bash" },
  { name: "codex", read: fromResponses, args: { cmd: SOLVE }, tool: "exec_command" },
  { name: "opencode", read: fromChat, args: { command: SOLVE }, tool: "bash" },
];

/** The captured main-loop bodies of one harness: the first call, and the one after its tool ran. */
function captured(name: string): { first?: string; done?: string } {
  const dir = join(FIXTURES, name);
  if (!existsSync(dir)) return {};
  const files = readdirSync(dir)
    .sort()
    .filter((f) => f.endsWith(".json") && !f.endsWith(".meta.json"));
  const pick = (what: string) => files.find((f) => f.includes("main") && f.includes(what));
  const path = (f: string | undefined) => (f === undefined ? undefined : join(dir, f));
  return { first: path(pick("tool")), done: path(pick("done")) };
}

describe.each(HARNESSES)("the harness script over $name's captured requests", (harness) => {
  const { first, done } = captured(harness.name);
  const answer = (path: string) => {
    const { turns, tools } = harness.read(JSON.parse(readFileSync(path, "utf8")));
    return harnessAnswer(
      { turns, tools, toolMode: "auto", thinking: false, sampleKey: "1:0" },
      config,
    );
  };

  it.skipIf(first === undefined)("calls the harness's own shell tool with the solution", () => {
    const call = answer(first!)?.toolCalls[0];
    expect(call?.name).toBe(harness.tool);
    expect(call?.arguments).toMatchObject(harness.args);
  });

  it.skipIf(done === undefined)("answers in text once the tool has run", () => {
    expect(answer(done!)).toEqual({ content: FINAL_ANSWER, toolCalls: [] });
  });
});

const OPENCODE = join(FIXTURES, "opencode");

describe.skipIf(!existsSync(OPENCODE))("opencode's captured chat bodies, sent as they are", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, model: "policy", ...config });
  });
  afterAll(() => sim.close());
  const stream = async (file: string) => {
    const body = JSON.parse(readFileSync(join(OPENCODE, file), "utf8"));
    const chunks = jsonChunks(
      await postSse(`${sim.url}/v1/chat/completions`, body, { "x-sample-key": "1:0" }),
    );
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice: Json) => choice.delta));
    return {
      content: deltas.map((delta) => delta.content ?? "").join(""),
      calls: deltas.flatMap((delta) => delta.tool_calls ?? []),
    };
  };

  it("answers the title call, which offers no tools, with the usual script", async () => {
    const { content, calls } = await stream("01-chat-side.json");
    expect(calls).toEqual([]);
    expect(content).not.toBe("");
  });

  it("streams a bash call of the solution, then a final answer", async () => {
    const { calls } = await stream("02-chat-main-tool.json");
    expect(calls[0].function.name).toBe("bash");
    const args = calls.map((call: Json) => call.function.arguments ?? "").join("");
    expect(JSON.parse(args)).toEqual({ command: SOLVE });
    expect((await stream("03-chat-main-done.json")).content).toBe(FINAL_ANSWER);
  });
});
