/** @module Exporting a rollout as an ATIF v1.7 trajectory. (Placeholder: being written.) */
import type { RolloutView } from "../schemas/rollout-api";
import type { JsonObject } from "../schemas/json";

/** The rollout as an ATIF v1.7 document. */
export function toAtif(view: RolloutView): JsonObject {
  return { schema_version: "ATIF-v1.7", session_id: view.rollout_id, steps: [] };
}
