/**
 * @module What an online session's view and samples say about it: its assignment, and the outcome
 * its application object wrote as an `online` annotation span when the feedback window closed
 * (src/runtime/online/online-app-core.ts). Before that the session is `open`.
 */
import { OnlineFields, type OnlineAssignment } from "../../../schemas/online";
import type { Span } from "../../../schemas/span";

/** The annotation span's name that carries a closed session's outcome. */
export const ONLINE_OUTCOME_SPAN = "online";

/** `assignment`'s fields, with the outcome of the last `online` annotation among `spans` (open when none). */
export function onlineFieldsOf(assignment: OnlineAssignment, spans: readonly Span[]): OnlineFields {
  const base: OnlineFields = {
    app_id: assignment.app_id,
    session_id: assignment.session_id,
    version: assignment.version,
    prompt_key: assignment.prompt_key,
    status: "open",
    reward: null,
    rule: "",
    feedback: [],
  };
  const outcome = [...spans]
    .reverse()
    .find((span) => span.kind === "annotation" && span.name === ONLINE_OUTCOME_SPAN);
  if (!outcome) return base;
  const parsed = OnlineFields.safeParse(outcome.value);
  if (!parsed.success) return base;
  const { status, reward, rule, feedback } = parsed.data;
  return { ...base, status, reward, rule, feedback };
}
