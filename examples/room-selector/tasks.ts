/**
 * @module The room-selector tasks: what a meeting needs and the room that should be chosen
 * (the label), plus the rule the labels follow, which the prompt states to the model.
 */
import { z } from "zod";
import type { AgentTask } from "../../src/sdk";
import { roomsAndAvailability } from "./rooms";

/** What a meeting needs (the task's `extra_args`). */
export const RoomRequirement = z.object({
  date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "date must be YYYY-MM-DD"),
  time: z.string().regex(/^\d{1,2}:\d{2}$/, "time must be HH:MM"),
  duration_min: z.int().min(1),
  attendees: z.int().min(1),
  needs: z.array(z.string()),
  accessible_required: z.boolean(),
});
export type RoomRequirement = z.infer<typeof RoomRequirement>;

/** One task: an id, the requirement and the expected room. */
export interface RoomSelectionTask {
  id: string;
  requirement: RoomRequirement;
  expected_choice: string;
}

/** A few meetings on 2025-10-13 against the catalogue in rooms.ts. */
export const ROOM_TASKS: readonly RoomSelectionTask[] = [
  {
    id: "standup",
    requirement: {
      date: "2025-10-13",
      time: "10:00",
      duration_min: 60,
      attendees: 4,
      needs: ["whiteboard"],
      accessible_required: false,
    },
    expected_choice: "Lyra",
  },
  {
    id: "one-on-one",
    requirement: {
      date: "2025-10-13",
      time: "14:00",
      duration_min: 30,
      attendees: 2,
      needs: ["whiteboard"],
      accessible_required: true,
    },
    expected_choice: "Orion",
  },
  {
    id: "demo",
    requirement: {
      date: "2025-10-13",
      time: "15:00",
      duration_min: 45,
      attendees: 5,
      needs: ["projector"],
      accessible_required: false,
    },
    expected_choice: "Vega",
  },
  {
    id: "demo-accessible",
    requirement: {
      date: "2025-10-13",
      time: "15:00",
      duration_min: 45,
      attendees: 5,
      needs: ["projector"],
      accessible_required: true,
    },
    expected_choice: "Draco",
  },
  {
    id: "all-hands",
    requirement: {
      date: "2025-10-13",
      time: "11:00",
      duration_min: 60,
      attendees: 9,
      needs: ["projector", "confphone"],
      accessible_required: true,
    },
    expected_choice: "Nova",
  },
];

/**
 * The labelling rule: among free rooms that seat everyone, have every needed item and are
 * accessible when required, the smallest, then the nearest. Null when no room fits.
 */
export function bestRoom(requirement: RoomRequirement): string | null {
  const fitting = roomsAndAvailability(
    requirement.date,
    requirement.time,
    requirement.duration_min,
  ).filter(
    (room) =>
      room.free &&
      room.capacity >= requirement.attendees &&
      requirement.needs.every((item) => room.equipment.includes(item)) &&
      (room.accessible || !requirement.accessible_required),
  );
  fitting.sort((a, b) => a.capacity - b.capacity || a.distance_m - b.distance_m);
  return fitting[0]?.id ?? null;
}

/** The task as `POST /v1/rollouts` takes it: the label in `ground_truth`, the requirement in `extra_args`. */
export function toAgentTask(
  task: RoomSelectionTask,
): Pick<AgentTask, "problem" | "ground_truth" | "extra_args"> {
  const { requirement: r } = task;
  return {
    problem: `Book a room on ${r.date} at ${r.time} for ${r.duration_min} minutes, ${r.attendees} attendees.`,
    ground_truth: task.expected_choice,
    extra_args: { ...r },
  };
}
