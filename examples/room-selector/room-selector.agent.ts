/**
 * @module Example `room-selector`: Agent-lightning's room selector tutorial as a function agent
 * (`rollout(...)`). The user turn comes from a `promptTemplate` resource (what an optimizer such as
 * APO tunes through `PUT /v1/resources/room_selector_prompt`), the model may call the room lookup
 * tool, and the returned reward grades its final answer against the task's expected room.
 */
import type OpenAI from "openai";
import { promptTemplate, rollout } from "../../src/sdk";
import { gradeRoomChoice } from "./grading";
import { ROOM_TOOL, ROOM_TOOL_NAME, runRoomTool } from "./rooms";
import { RoomRequirement } from "./tasks";

/** The default prompt: the tutorial's baseline template plus the selection rule and the answer format. */
export const ROOM_PROMPT_DEFAULT =
  "Find a room on {date} at {time} for {duration_min} minutes, {attendees} attendees. Needs: {needs}. Accessible required: {accessible_required}.\n" +
  "Use the get_rooms_and_availability tool to see which rooms are free. Choose a free room that seats everyone, has every needed item and is accessible if required; " +
  "prefer the smallest such room, then the nearest. End with the line: Final answer: <room id>";

/** Model calls per rollout: the lookup, the answer, and one spare turn. */
const MAX_TURNS = 3;

type Message = OpenAI.ChatCompletionMessageParam;

/** The template's fields from a requirement (lists and flags written as a person would). */
function templateValues(requirement: RoomRequirement): Record<string, string | number> {
  return {
    ...requirement,
    needs: requirement.needs.join(", ") || "nothing",
    accessible_required: requirement.accessible_required ? "yes" : "no",
  };
}

/** Registered as `room-selector`. */
export const roomSelector = rollout(
  async ({ task, llm, signal, promptTemplate: template }) => {
    const requirement = RoomRequirement.parse(task.extra_args);
    const messages: Message[] = [
      { role: "user", content: template.format(templateValues(requirement)) },
    ];
    for (let turn = 0; turn < MAX_TURNS; turn++) {
      const reply = await llm.openai.chat.completions.create(
        { model: llm.model, messages, tools: [ROOM_TOOL], tool_choice: "auto" },
        { signal },
      );
      const message = reply.choices[0]?.message;
      const calls = (message?.tool_calls ?? []).filter((call) => call.type === "function");
      // Replay the turn exactly as generated (content and tool calls only), so the next prompt extends this one.
      messages.push({
        role: "assistant",
        content: message?.content ?? "",
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      });
      if (calls.length === 0) return gradeRoomChoice(message?.content ?? "", task.ground_truth);
      for (const call of calls) {
        const content =
          call.function.name === ROOM_TOOL_NAME
            ? runRoomTool(call.function.arguments)
            : `error: unknown tool "${call.function.name}"`;
        messages.push({ role: "tool", tool_call_id: call.id, content });
      }
    }
    return 0; // still calling tools after MAX_TURNS: no answer to grade
  },
  {
    name: "room-selector",
    resources: {
      promptTemplate: promptTemplate(ROOM_PROMPT_DEFAULT, { name: "room_selector_prompt" }),
    },
  },
);
