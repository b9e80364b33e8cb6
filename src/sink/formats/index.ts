/**
 * @module What the Worker's routes and dashboard use of the formats directly: a rollout's
 * conversation call by call, and its OTLP trace. The Arrow codec has its own door (`./arrow`).
 */
export { newMessages } from "./conversation";
export { rolloutTrace } from "./otlp-trace";
