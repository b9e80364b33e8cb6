/** Integration: examples/room-selector, a function agent with a prompt template resource and a lookup tool, against the simulator. */
import { describe, expect, it } from "vitest";
import { gradeRoomChoice } from "../../../examples/room-selector/grading";
import { ROOM_PROMPT_DEFAULT } from "../../../examples/room-selector/room-selector.agent";
import { ROOM_TOOL_NAME, ROOMS, runRoomTool } from "../../../examples/room-selector/rooms";
import { bestRoom, ROOM_TASKS, toAgentTask } from "../../../examples/room-selector/tasks";
import { PromptTemplate } from "../../../src/sdk";
import { api, runRollout, uniqueId } from "../../fixtures/rollouts";
import { expectOneSample, expectTokenLevelCalls, lastAnswer } from "../fixtures/examples-fixtures";

const standup = ROOM_TASKS[0]!;
const run = () =>
  runRollout({ agent: "room-selector", rollout_id: uniqueId("rooms"), task: toAgentTask(standup) });
const firstPrompt = (view: Awaited<ReturnType<typeof run>>) =>
  (view.llm_calls[0]!.request.messages as Array<{ content: string }>)[0]!.content;

describe("examples/room-selector (integration)", () => {
  it("labels every task with the rule its prompt states, against the tool's view of the bookings", () => {
    expect(ROOM_TASKS.map((task) => bestRoom(task.requirement))).toEqual(
      ROOM_TASKS.map((task) => task.expected_choice),
    );
    const rooms = JSON.parse(
      runRoomTool(JSON.stringify({ date: "2025-10-13", time: "10:00", duration_min: 60 })),
    ).rooms as Array<{ id: string; free: boolean }>;
    expect(rooms.filter((room) => !room.free).map((room) => room.id)).toEqual(["Orion", "Draco"]);
    expect(runRoomTool('{"date": "13/10"}')).toBe("error: date must be YYYY-MM-DD");
  });

  it("formats the template's default, looks the rooms up, and returns the grade of the final answer", async () => {
    const view = await run();
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      attempts: 1,
    });
    expect(firstPrompt(view)).toBe(
      new PromptTemplate(ROOM_PROMPT_DEFAULT).format({
        ...standup.requirement,
        needs: "whiteboard",
        accessible_required: "no",
      }),
    );
    expect(view.spans.find((span) => span.name === "resources")).toMatchObject({
      kind: "annotation",
      value: { promptTemplate: "default" },
    });
    const [lookup, answer] = view.llm_calls;
    expect(view.llm_calls).toHaveLength(2);
    const toolCall = lookup!.response_message.tool_calls![0]!;
    expect(toolCall.function.name).toBe(ROOM_TOOL_NAME);
    expect(JSON.parse(toolCall.function.arguments)).toEqual({
      date: "2025-10-13",
      time: "10:00",
      duration_min: 60,
    });
    expect(answer!.request.messages).toContainEqual({
      role: "tool",
      tool_call_id: toolCall.id,
      content: runRoomTool(toolCall.function.arguments),
    });
    expect(ROOMS.map((room) => room.id)).toContain(
      /Final answer: (\w+)/.exec(lastAnswer(view))?.[1],
    );
    expect(view.reward).toBe(gradeRoomChoice(lastAnswer(view), "Lyra"));
    expectTokenLevelCalls(view);
    await expectOneSample(view);
  });

  it("uses the policy's latest version of the prompt template and records which one", async () => {
    const template =
      "Book {attendees} people into a room on {date} at {time} for {duration_min} min. Needs: {needs}. Accessible required: {accessible_required}. Say: Final answer: <room id>";
    const put = await api("/v1/resources/room_selector_prompt", {
      method: "PUT",
      body: JSON.stringify({ template, engine: "f-string" }),
    });
    expect(put.status).toBe(201);
    const { id } = (await put.json()) as { id: string };
    const view = await run();
    expect(firstPrompt(view)).toBe(
      "Book 4 people into a room on 2025-10-13 at 10:00 for 60 min. Needs: whiteboard. Accessible required: no. Say: Final answer: <room id>",
    );
    expect(view.spans.find((span) => span.name === "resources")!.value).toEqual({
      promptTemplate: id,
    });
    expect(view.reward).toBe(gradeRoomChoice(lastAnswer(view), "Lyra"));
  });
});
