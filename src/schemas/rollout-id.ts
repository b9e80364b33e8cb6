/** @module The rollout id: a Durable Object name, a URL path segment and an R2 key part at once. */
import { z } from "zod";

/**
 * Rollout ids become DO names, URL path segments and R2 key parts: printable, bounded, and never
 * `.` or `..`, which URL normalization turns into another path (the rollout would be unreachable).
 */
export const RolloutId = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,200}$/, "rollout_id must be 1-200 characters of A-Z a-z 0-9 . _ : -")
  .refine((id) => id !== "." && id !== "..", "rollout_id must not be . or ..");
