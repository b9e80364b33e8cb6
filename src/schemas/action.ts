/** @module What an agent decided to do after a model response. */
import { z } from "zod";
import { JsonValue } from "./json";

/**
 * An agent's action, as in the seed (`Action(action=...)`): any JSON value the environment
 * understands. It is committed with the step, so a resumed driver can replay it into a fresh env.
 */
export const Action = z.object({ action: JsonValue });
export type Action = z.infer<typeof Action>;
