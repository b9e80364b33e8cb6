/**
 * @module Training modes and data managers registered by name (the seed's TrainRegistry and
 * DataManagerRegistry): how stale a group may be when the trainer pulls it, and whether a
 * rollout's results feed the trainer at all.
 */
import { InvalidInputError } from "../errors";

/** How a trainer consumes groups: the policy-version lag it tolerates. */
export interface TrainingModeDefinition {
  /**
   * Largest `current policy_version - group.policy_version_start` a group may have when pulled;
   * older complete groups are dropped (and counted), never delivered. 0 = on-policy only.
   */
  max_staleness: number;
  /**
   * When true, `<name>/<k>` (k an integer 0..1,000,000) is also a mode: this one with
   * `max_staleness` k. `max_staleness` above is then the default for the bare `<name>`.
   */
  parametric?: boolean;
  /** One line for listings. */
  description: string;
}

/** A training mode resolved for one name, e.g. `async/3` → `{name: "async/3", max_staleness: 3}`. */
export interface ResolvedTrainingMode {
  name: string;
  max_staleness: number;
  description: string;
}

/** What happens to a finished rollout's results. */
export interface DataManagerDefinition {
  /** True: the results go into the trainer feed; false: the trajectories are only stored in R2. */
  feeds_trainer: boolean;
  /** One line for listings. */
  description: string;
}

const MODE_NAME = /^[a-z][a-z0-9_.-]{0,31}(\/[a-z][a-z0-9_.-]{0,31})?$/;
const MANAGER_NAME = /^[a-z][a-z0-9_./-]{0,63}$/;
const STALENESS_SUFFIX = /^(0|[1-9][0-9]{0,6})$/;
/** Largest staleness a parametric mode accepts. */
export const MAX_STALENESS = 1_000_000;

function checkStaleness(value: number, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > MAX_STALENESS)
    throw new TypeError(`${what}: max_staleness must be an integer 0..${MAX_STALENESS}`);
}

/** Names → training modes. The default instance (`trainingModes`) carries `verl/hybrid`, `verl/one_step_off` and `async`. */
export class TrainingModeRegistry {
  readonly #modes = new Map<string, TrainingModeDefinition>();

  /**
   * Adds a mode; a second one under the same name is a programming error.
   *
   * @example
   * trainingModes.register("verl/two_step_off", { max_staleness: 2, description: "two versions behind" });
   */
  register(name: string, definition: TrainingModeDefinition): this {
    if (!MODE_NAME.test(name))
      throw new TypeError(`training mode name "${name}" must match ${MODE_NAME}`);
    if (this.#modes.has(name)) throw new TypeError(`training mode "${name}" is already registered`);
    checkStaleness(definition.max_staleness, `training mode "${name}"`);
    this.#modes.set(name, { ...definition });
    return this;
  }

  /** The mode `name` names (exact, or `<parametric>/<k>`), or undefined. */
  get(name: string): ResolvedTrainingMode | undefined {
    const exact = this.#modes.get(name);
    if (exact) return { name, max_staleness: exact.max_staleness, description: exact.description };
    const slash = name.lastIndexOf("/");
    if (slash <= 0) return undefined;
    const base = this.#modes.get(name.slice(0, slash));
    const suffix = name.slice(slash + 1);
    if (!base?.parametric || !STALENESS_SUFFIX.test(suffix) || Number(suffix) > MAX_STALENESS)
      return undefined;
    return { name, max_staleness: Number(suffix), description: base.description };
  }

  /** Like `get`, but an unknown name throws InvalidInputError (422) listing the known modes. */
  resolve(name: string): ResolvedTrainingMode {
    const mode = this.get(name);
    if (!mode)
      throw new InvalidInputError(
        `unknown training mode "${name}"; known modes: ${this.describeNames()}`,
        { details: [{ path: "training_mode", message: `unknown training mode "${name}"` }] },
      );
    return mode;
  }

  /** Registered names, sorted; parametric ones also as `<name>/<k>`. */
  names(): string[] {
    return [...this.#modes.entries()]
      .flatMap(([name, mode]) => (mode.parametric ? [name, `${name}/<k>`] : [name]))
      .sort();
  }

  /** The names, joined for error messages. */
  describeNames(): string {
    return this.names().join(", ");
  }
}

/** Names → data managers. The default instance (`dataManagers`) carries `train` and `infer`. */
export class DataManagerRegistry {
  readonly #managers = new Map<string, DataManagerDefinition>();

  /**
   * Adds a data manager; a second one under the same name is a programming error.
   *
   * @example
   * dataManagers.register("eval", { feeds_trainer: false, description: "held-out evaluation" });
   */
  register(name: string, definition: DataManagerDefinition): this {
    if (!MANAGER_NAME.test(name))
      throw new TypeError(`data manager name "${name}" must match ${MANAGER_NAME}`);
    if (this.#managers.has(name))
      throw new TypeError(`data manager "${name}" is already registered`);
    this.#managers.set(name, { ...definition });
    return this;
  }

  /** The data manager registered under `name`, or undefined. */
  get(name: string): DataManagerDefinition | undefined {
    return this.#managers.get(name);
  }

  /** Like `get`, but an unknown name throws InvalidInputError (422) listing the known managers. */
  resolve(name: string): DataManagerDefinition {
    const manager = this.#managers.get(name);
    if (!manager)
      throw new InvalidInputError(
        `unknown data manager "${name}"; known data managers: ${this.names().join(", ")}`,
        { details: [{ path: "data_manager", message: `unknown data manager "${name}"` }] },
      );
    return manager;
  }

  /** Every registered name, sorted. */
  names(): string[] {
    return [...this.#managers.keys()].sort();
  }
}

/** Default staleness of the bare `async` mode; `async/<k>` picks another bound per group. */
export const DEFAULT_ASYNC_MAX_STALENESS = 4;

/**
 * Default staleness of online data (`online`): feedback may come long after the conversation, so
 * its bound is its own, wider than the async modes'; the samples carry their serving version and
 * behaviour log-probs for the importance correction (docs/online.md, "Staleness").
 */
export const DEFAULT_ONLINE_MAX_STALENESS = 8;

/** The training modes the Worker (and its TrainerFeed) resolve `training_mode` against. */
export const trainingModes = new TrainingModeRegistry()
  .register("verl/hybrid", {
    max_staleness: 0,
    description: "colocated (hybrid engine): only samples from the current policy version",
  })
  .register("verl/one_step_off", {
    max_staleness: 1,
    description: "verl's one-step-off-policy recipe: samples at most one version behind",
  })
  .register("async", {
    max_staleness: DEFAULT_ASYNC_MAX_STALENESS,
    parametric: true,
    description: "fully asynchronous: `async` allows 4 versions behind, `async/<k>` allows k",
  })
  .register("online", {
    max_staleness: DEFAULT_ONLINE_MAX_STALENESS,
    parametric: true,
    description:
      "live traffic (docs/online.md): `online` allows 8 versions behind, `online/<k>` allows k",
  });

/** The data managers the results consumer resolves `data_manager` against. */
export const dataManagers = new DataManagerRegistry()
  .register("train", { feeds_trainer: true, description: "results go to the trainer feed" })
  .register("infer", { feeds_trainer: false, description: "trajectories are stored in R2 only" });

/** A field naming an unregistered mode or manager, with the path a caller sent it under. */
export interface PlacementIssue {
  path: string;
  message: string;
}

/**
 * Checks a group's `training_mode` and `data_manager` against the registries at submit time: an
 * unknown name (a typo such as `verl/hybird`) would otherwise run every rollout, then have each
 * result refused by the feed and dead-lettered. `prefix` is prepended to the paths (`group.`).
 */
export function placementIssues(
  placement: { training_mode: string; data_manager: string },
  prefix = "",
  registries = { modes: trainingModes, managers: dataManagers },
): PlacementIssue[] {
  const issues: PlacementIssue[] = [];
  if (!registries.modes.get(placement.training_mode)) {
    issues.push({
      path: `${prefix}training_mode`,
      message: `unknown training mode "${placement.training_mode}"; known modes: ${registries.modes.describeNames()}`,
    });
  }
  if (!registries.managers.get(placement.data_manager)) {
    issues.push({
      path: `${prefix}data_manager`,
      message: `unknown data manager "${placement.data_manager}"; known data managers: ${registries.managers.names().join(", ")}`,
    });
  }
  return issues;
}
