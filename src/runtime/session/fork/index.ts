/**
 * @module Tree rollouts: deciding a fork, the prefix a parent hands its children, the child
 * created holding it, and the forks a parent lists.
 */
export { SessionForkOps, type ForkSourceResult } from "./session-fork";
export { agentForkRefusal, planFork } from "./fork-plan";
export { withStepIndex, type ForkPrefix } from "./fork-prefix";
export { readForks } from "./fork-records";
