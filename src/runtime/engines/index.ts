/**
 * @module What the Worker uses of the engines directly: the origin an in-Worker agent's model
 * calls are addressed to. The driver picks and runs the engines (src/runtime/driver/).
 */
export { INTERNAL_ORIGIN } from "./llm-resource";
