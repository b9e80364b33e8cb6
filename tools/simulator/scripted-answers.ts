/**
 * @module The scripted "model": decides what the simulator answers, from the conversation and
 * a seeded random source. Five behaviours, tried in order: code for a js-coder task, room selection
 * (examples/room-selector), calculator tool use, worked arithmetic, and a filler sentence.
 */
import { evaluateExpression, findExpression, formatNumber } from "./arithmetic";
import { type CodingTask, findCodingTask } from "./coding-tasks";
import type { ParsedToolCall } from "./hermes";
import type { Rng } from "./rng";

/** One turn of the conversation as the script reads it. */
export interface ScriptTurn {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
}

/** How the request lets the model use tools. */
export type ToolMode = "none" | "auto" | "required" | { name: string };

/** Everything the script decides from. */
export interface ScriptInput {
  turns: readonly ScriptTurn[];
  toolNames: readonly string[];
  toolMode: ToolMode;
  rng: Rng;
  /** Probability of a correct final answer. */
  successRate: number;
  /** Prefix the answer with `<think>…</think>\n`. */
  thinking: boolean;
}

/** What the model writes: content, then hermes tool-call blocks. */
export interface ScriptAnswer {
  content: string;
  toolCalls: ParsedToolCall[];
}

/** Name of the tool the calculator behaviour calls. */
export const CALCULATOR_TOOL = "calculate";

/** Name of the tool the room-selection behaviour calls (examples/room-selector). */
export const ROOM_TOOL = "get_rooms_and_availability";

const FILLER_WORDS = [
  "the",
  "model",
  "answer",
  "is",
  "a",
  "simple",
  "question",
  "with",
  "some",
  "words",
  "and",
  "more",
  "text",
  "here",
  "for",
  "you",
  "to",
  "read",
  "today",
  "value",
  "result",
  "time",
  "people",
  "work",
  "good",
  "first",
  "new",
  "way",
  "think",
  "about",
  "this",
  "that",
];

function withThinking(input: ScriptInput, reasoning: string, answer: string): string {
  return input.thinking ? `<think>${reasoning}</think>\n${answer}` : answer;
}

/** A nearby wrong number: off by 1–9, never equal to the right one. */
function wrongNumber(value: number, rng: Rng): number {
  const offset = rng.int(1, 9) * (rng.next() < 0.5 ? -1 : 1);
  return value + offset;
}

function calculatorAnswer(input: ScriptInput, toolResult: string): ScriptAnswer {
  const shown = toolResult.trim();
  const correct = input.rng.next() < input.successRate;
  const numeric = Number(shown);
  let answer = shown;
  if (!correct)
    answer =
      Number.isFinite(numeric) && shown !== ""
        ? formatNumber(wrongNumber(numeric, input.rng))
        : String(input.rng.int(0, 99));
  const content = withThinking(
    input,
    `The tool returned ${shown}.`,
    `The result is \\boxed{${answer}}.`,
  );
  return { content, toolCalls: [] };
}

function mathAnswer(input: ScriptInput, expression: string): ScriptAnswer {
  const value = evaluateExpression(expression) ?? 0;
  const correct = input.rng.next() < input.successRate;
  const shown = formatNumber(correct ? value : wrongNumber(value, input.rng));
  const answer = `${expression} = ${shown}, so the answer is \\boxed{${shown}}`;
  return {
    content: withThinking(input, `I need to evaluate ${expression}.`, answer),
    toolCalls: [],
  };
}

function fillerAnswer(input: ScriptInput): ScriptAnswer {
  const count = input.rng.int(5, 40);
  const words: string[] = [];
  for (let i = 0; i < count; i++) words.push(input.rng.pick(FILLER_WORDS));
  const sentence = words.join(" ");
  const text = `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
  return { content: withThinking(input, "Let me think about this.", text), toolCalls: [] };
}

function mayCall(input: ScriptInput, tool: string): boolean {
  if (!input.toolNames.includes(tool)) return false;
  if (input.toolMode === "none") return false;
  return typeof input.toolMode === "string" || input.toolMode.name === tool;
}

/** A room as examples/room-selector's tool reports it (the fields the behaviour reads). */
interface RoomFacts {
  id: string;
  capacity: number;
  equipment: string[];
  accessible: boolean;
  distance_m: number;
  free: boolean;
}

/**
 * Room selection: asks the room tool about the slot the question names, then answers
 * `Final answer: <room>` with the smallest fitting free room (nearest among equals), or, when the
 * draw fails, another room. Undefined when the question names no slot or the result is not JSON.
 */
function roomAnswer(
  input: ScriptInput,
  question: string,
  toolResult: string | undefined,
): ScriptAnswer | undefined {
  const date = /\d{4}-\d{2}-\d{2}/.exec(question)?.[0];
  const time = /\b\d{1,2}:\d{2}\b/.exec(question)?.[0];
  const duration = /(\d+)\s*min/i.exec(question)?.[1];
  if (date === undefined || time === undefined || duration === undefined) return undefined;
  if (toolResult === undefined)
    return {
      content: "",
      toolCalls: [{ name: ROOM_TOOL, arguments: { date, time, duration_min: Number(duration) } }],
    };
  let rooms: RoomFacts[];
  try {
    rooms = (JSON.parse(toolResult) as { rooms: RoomFacts[] }).rooms;
    if (!Array.isArray(rooms) || rooms.length === 0) return undefined;
  } catch {
    return undefined;
  }
  const attendees = Number(/(\d+)\s*attendees/i.exec(question)?.[1] ?? 1);
  const needs = (/needs:\s*([^.\n]*)/i.exec(question)?.[1] ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== "" && item !== "nothing");
  const accessible = /accessible required:\s*(?:yes|true)/i.test(question);
  const fitting = rooms
    .filter(
      (room) =>
        room.free &&
        room.capacity >= attendees &&
        needs.every((item) => room.equipment.includes(item)) &&
        (room.accessible || !accessible),
    )
    .sort((a, b) => a.capacity - b.capacity || a.distance_m - b.distance_m);
  const others = rooms.filter((room) => room !== fitting[0]);
  const pick =
    fitting[0] !== undefined && (others.length === 0 || input.rng.next() < input.successRate)
      ? fitting[0]
      : input.rng.pick(others);
  return {
    content: withThinking(
      input,
      `Checking ${rooms.length} rooms.`,
      `${pick.id} is free and fits.\nFinal answer: ${pick.id}`,
    ),
    toolCalls: [],
  };
}

/** Share of wrong js-coder answers that never terminate (a busy loop the sandbox must stop). */
const LOOPING_SHARE = 0.05;
/** Code is harder than arithmetic: a js-coder answer is right with this share of the success rate. */
const CODING_SUCCESS_FACTOR = 0.5;

/**
 * Code for a js-coder task (tools/simulator/coding-tasks.ts): the reference solution
 * when the draw succeeds; otherwise, mostly, a version that corrupts the result for about half of
 * the inputs (so some tests pass), and sometimes a function that never returns.
 */
function codingAnswer(input: ScriptInput, codingTask: CodingTask): ScriptAnswer {
  const name = codingTask.name;
  let code: string;
  if (input.rng.next() < input.successRate * CODING_SUCCESS_FACTOR)
    code = `${codingTask.solution}\nexport { ${name} };`;
  else if (input.rng.next() < LOOPING_SHARE)
    code = `export function ${name}(...args) {\n  while (true) {}\n}`;
  else {
    code = [
      codingTask.solution.replace(`function ${name}(`, "function reference("),
      `export function ${name}(...args) {`,
      "  const r = reference(...args);",
      "  if (JSON.stringify(args).length % 2 === 0) return r;",
      '  return typeof r === "number" ? r + 1 : typeof r === "string" ? r + "!" : typeof r === "boolean" ? !r : Array.isArray(r) ? r.slice(1) : r;',
      "}",
    ].join("\n");
  }
  return {
    content: withThinking(input, `I need a function ${name}.`, `\`\`\`js\n${code}\n\`\`\``),
    toolCalls: [],
  };
}

function codingTaskOf(turns: readonly ScriptTurn[]): CodingTask | undefined {
  for (const turn of turns) {
    if (turn.role !== "user") continue;
    const found = findCodingTask(turn.content);
    if (found) return found;
  }
  return undefined;
}

/** Decides the next assistant message. */
export function scriptedAnswer(input: ScriptInput): ScriptAnswer {
  const turns = input.turns;
  let lastUser = -1;
  for (let i = turns.length - 1; i >= 0; i--) {
    if (turns[i]?.role === "user") {
      lastUser = i;
      break;
    }
  }
  const question = turns[lastUser]?.content ?? "";
  const toolResults = turns.slice(lastUser + 1).filter((turn) => turn.role === "tool");
  const expression = findExpression(question);
  const codingTask = codingTaskOf(turns);
  if (codingTask !== undefined) return codingAnswer(input, codingTask);

  if (mayCall(input, ROOM_TOOL)) {
    const answer = roomAnswer(input, question, toolResults[toolResults.length - 1]?.content);
    if (answer !== undefined) return answer;
  }
  if (mayCall(input, CALCULATOR_TOOL)) {
    const lastResult = toolResults[toolResults.length - 1];
    if (lastResult !== undefined) return calculatorAnswer(input, lastResult.content);
    if (expression !== undefined) {
      const call: ParsedToolCall = { name: CALCULATOR_TOOL, arguments: { expression } };
      return {
        content: input.thinking
          ? `<think>I should use the ${CALCULATOR_TOOL} tool for ${expression}.</think>\n`
          : "",
        toolCalls: [call],
      };
    }
  }
  if (expression !== undefined) return mathAnswer(input, expression);
  return fillerAnswer(input);
}
