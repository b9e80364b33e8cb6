/**
 * @module What the Worker's routes, classes and dashboard use of the training rules: the sample
 * builder's verdicts, how a rollout counts for its group, the training modes, and a mask's totals.
 */
export { maskTotals } from "./mask-display";
export { memberSignal } from "./member-signal";
export { buildSamplesForView, untrainableReason } from "./sample-builder";
export { placementIssues, trainingModes } from "./training-modes";
