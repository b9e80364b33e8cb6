/** @module The numbers the batch and run views show: pass@k by data source, and GRPO's advantages. */
export { grpoAdvantages } from "./grpo-advantage";
export { scoreByDataSource, scoreRows } from "./pass-at-k";
