/**
 * @module The room catalogue of the room-selector example and its lookup tool
 * (`get_rooms_and_availability`, as in Agent-lightning's room selector tutorial).
 */
import type { ToolDefinition } from "../../src/sdk";

/** A booking: `duration_min` minutes from `time` (HH:MM) on `date` (YYYY-MM-DD). */
export interface Booking {
  date: string;
  time: string;
  duration_min: number;
}

/** A meeting room. */
export interface Room {
  id: string;
  capacity: number;
  equipment: string[];
  accessible: boolean;
  /** Walking distance from the person booking, in metres. */
  distance_m: number;
  booked: Booking[];
}

/** A room as the tool reports it: its facts and whether it is free for the asked slot. */
export interface RoomStatus extends Room {
  free: boolean;
}

/** The building's rooms. */
export const ROOMS: readonly Room[] = [
  {
    id: "Orion",
    capacity: 4,
    equipment: ["tv", "whiteboard"],
    accessible: true,
    distance_m: 12,
    booked: [
      { date: "2025-10-13", time: "10:00", duration_min: 60 },
      { date: "2025-10-13", time: "15:00", duration_min: 30 },
    ],
  },
  {
    id: "Lyra",
    capacity: 10,
    equipment: ["projector", "whiteboard", "confphone"],
    accessible: true,
    distance_m: 30,
    booked: [
      { date: "2025-10-13", time: "09:30", duration_min: 30 },
      { date: "2025-10-13", time: "11:00", duration_min: 60 },
    ],
  },
  {
    id: "Vega",
    capacity: 6,
    equipment: ["projector", "tv"],
    accessible: false,
    distance_m: 8,
    booked: [{ date: "2025-10-13", time: "14:00", duration_min: 60 }],
  },
  {
    id: "Nova",
    capacity: 12,
    equipment: ["projector", "whiteboard", "confphone", "tv"],
    accessible: true,
    distance_m: 45,
    booked: [],
  },
  {
    id: "Cygnus",
    capacity: 3,
    equipment: ["whiteboard"],
    accessible: true,
    distance_m: 5,
    booked: [{ date: "2025-10-13", time: "13:00", duration_min: 120 }],
  },
  {
    id: "Draco",
    capacity: 8,
    equipment: ["projector", "confphone"],
    accessible: true,
    distance_m: 20,
    booked: [{ date: "2025-10-13", time: "10:00", duration_min: 90 }],
  },
];

/** The tool's name, as the model calls it. */
export const ROOM_TOOL_NAME = "get_rooms_and_availability";

/** The tool as offered to the model. */
export const ROOM_TOOL: ToolDefinition = {
  type: "function",
  function: {
    name: ROOM_TOOL_NAME,
    description:
      "Return every meeting room with its capacity, equipment, accessibility, distance to the user, bookings, and whether it is free for the given slot.",
    parameters: {
      type: "object",
      properties: {
        date: { type: "string", description: "YYYY-MM-DD" },
        time: { type: "string", description: "HH:MM, 24-hour" },
        duration_min: { type: "integer", description: "length of the meeting in minutes" },
      },
      required: ["date", "time", "duration_min"],
    },
  },
};

function minutes(time: string): number {
  const [hours, mins] = time.split(":").map(Number);
  return (hours ?? 0) * 60 + (mins ?? 0);
}

/** Whether `[time, time + duration)` on `date` overlaps a booking (back-to-back is fine). */
function overlaps(date: string, time: string, durationMin: number, booking: Booking): boolean {
  if (booking.date !== date) return false;
  const start = minutes(time);
  const bookedStart = minutes(booking.time);
  return start < bookedStart + booking.duration_min && bookedStart < start + durationMin;
}

/** Every room with `free` set for the slot. */
export function roomsAndAvailability(
  date: string,
  time: string,
  durationMin: number,
): RoomStatus[] {
  return ROOMS.map((room) => ({
    ...room,
    free: !room.booked.some((booking) => overlaps(date, time, durationMin, booking)),
  }));
}

/**
 * Runs one tool call from its raw JSON arguments and returns what the model reads: `{"rooms": […]}`,
 * or an `error: …` line for bad arguments (a real tool answers, it does not throw).
 */
export function runRoomTool(rawArguments: string): string {
  let args: { date?: unknown; time?: unknown; duration_min?: unknown };
  try {
    args = JSON.parse(rawArguments) as typeof args;
  } catch {
    return 'error: arguments must be JSON like {"date": "2025-10-13", "time": "10:00", "duration_min": 60}';
  }
  const { date, time, duration_min: duration } = args;
  if (typeof date !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(date))
    return "error: date must be YYYY-MM-DD";
  if (typeof time !== "string" || !/^\d{1,2}:\d{2}$/.test(time)) return "error: time must be HH:MM";
  if (typeof duration !== "number" || !Number.isInteger(duration) || duration < 1)
    return "error: duration_min must be a positive integer";
  return JSON.stringify({ rooms: roomsAndAvailability(date, time, duration) });
}
