/** @module The shape the demo environments share: built from a task, starting with its problem. */
import type { AgentTask } from "../schemas/agent-task";
import type { JsonObject } from "../schemas/json";
import { BaseEnv, type EnvReset } from "../sdk/base-env";

/** An environment whose first observation is the task's problem text. */
export abstract class ProblemEnv extends BaseEnv {
  protected readonly task: AgentTask;

  constructor(task: AgentTask) {
    super();
    this.task = task;
  }

  /** Builds the env from `{ task }` (the seed's from_dict), for whichever subclass it is called on. */
  static fromDict<E extends ProblemEnv>(this: new (task: AgentTask) => E, info: JsonObject): E {
    return new this(info.task as unknown as AgentTask);
  }

  reset(): EnvReset {
    return [this.task.problem, {}];
  }
}
