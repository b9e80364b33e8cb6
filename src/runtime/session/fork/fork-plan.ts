/**
 * @module Deciding a fork: whether the parent can be forked at `at_step`, and the children's specs
 * (config, seed, group, place in the tree). Pure: the route feeds it the parent's fork source.
 */
import { fnv1a32 } from "../../../fnv1a";
import type { RolloutSpec } from "../../../schemas/rollout-api";
import { RolloutConfig } from "../../../schemas/rollout-config";
import type { RolloutGroup } from "../../../schemas/rollout-group";
import type { ForkRolloutRequest } from "../../../schemas/rollout-tree";
import { TERMINAL_STATUSES } from "../../../schemas/termination";
import type { AgentDefinition } from "../../../sdk/agent-registry";
import type { ForkSourceResult } from "./session-fork";

/** One field-level reason a fork is refused. */
export interface ForkProblem {
  path: string;
  message: string;
}

/** The children to create, or why not: 409 when the parent may still get there (a step not yet committed), else 422. */
export type ForkPlan =
  { ok: true; children: RolloutSpec[] } | { ok: false; status: 409 | 422; problems: ForkProblem[] };

/**
 * Why rollouts of this agent cannot fork, or null when they can. A fork continues from step k by
 * the driver's resume (agent replayed from the recorded steps, env restored from its snapshot or
 * replayed), which only stepwise agents have: an attempt-style agent's code runs in one piece and
 * has no step to continue from, and an external agent's state is not here at all.
 */
export function forkRefusal(
  spec: RolloutSpec,
  definition: AgentDefinition | undefined,
): string | null {
  if (spec.kind === "external")
    return `rollout ${spec.rollout_id} is external (agent "${spec.agent}"): its agent's state lives with the agent, not in the session, so it cannot be forked`;
  return agentForkRefusal(spec.agent, definition);
}

/** Why a driven rollout of agent `name` cannot fork, or null (a batch's `tree` asks this at submit time). */
export function agentForkRefusal(
  name: string,
  definition: AgentDefinition | undefined,
): string | null {
  if (!definition) return `agent "${name}" is not registered in this deployment`;
  if (definition.kind !== "stepwise")
    return `agent "${name}" is a ${definition.kind} agent: it runs as attempts with no committed steps to continue from; only stepwise agents (BaseAgent + BaseEnv) can be forked`;
  if (definition.engine !== "stepwise")
    return `agent "${name}" runs on the "${definition.engine}" engine as attempts; only the stepwise engine continues from a committed step`;
  return null;
}

/** Whether the parent can be branched at `atStep`, as a problem (with its status) or null. */
function stepProblem(
  source: Extract<ForkSourceResult, { ok: true }>,
  atStep: number,
): { status: 409 | 422; problem: ForkProblem } | null {
  const { step_count: committed, status } = source;
  if (atStep > committed) {
    // A running parent may still commit step k: asking again later can succeed.
    if (!TERMINAL_STATUSES.has(status))
      return {
        status: 409,
        problem: {
          path: "at_step",
          message: `the parent has committed ${committed} step(s) so far and is ${status}: step ${atStep} is not committed yet`,
        },
      };
    return {
      status: 422,
      problem: {
        path: "at_step",
        message: `at_step must be <= ${committed}, the steps the parent committed (it is ${status})`,
      },
    };
  }
  if (atStep === committed && atStep > 0 && source.last_step_done)
    return {
      status: 422,
      problem: {
        path: "at_step",
        message: `the parent's episode ended with step ${atStep - 1}: nothing follows step ${atStep} to branch`,
      },
    };
  return null;
}

/** The parent's config with the request's overrides, or the problems named `config.<field>`. */
function childConfig(
  parent: RolloutConfig,
  overrides: Record<string, unknown> | undefined,
): { config: RolloutConfig } | { problems: ForkProblem[] } {
  const merged = RolloutConfig.safeParse({ ...parent, ...overrides });
  if (merged.success) return { config: merged.data };
  return {
    problems: merged.error.issues.map((issue) => ({
      path: ["config", ...issue.path.map(String)].join("."),
      message: issue.message,
    })),
  };
}

/**
 * A child's seed: none when the config has none, else one derived from it and the child's id, so
 * n children of one fork sample n continuations (one seed for all would give n copies).
 */
function childSeed(seed: number | null, childId: string): number | null {
  return seed === null ? null : fnv1a32(`${seed}:${childId}`) & 0x7fffffff;
}

/**
 * The children's group: none when the parent had none (each child is then its own group of one,
 * like any rollout created alone); else one new group of the n siblings (they share one prefix and
 * differ only after it, which is what a GRPO group at a tree node compares), named after the first
 * child, in the parent's training mode and data manager. Not a batch's: no batch tracks them.
 */
function childGroup(
  parent: RolloutGroup | null,
  childIds: readonly string[],
  index: number,
): RolloutGroup | null {
  if (!parent) return null;
  return {
    ...parent,
    uid: `fork:${childIds[0]}`,
    sample_index: index,
    group_size: childIds.length,
    batch_id: null,
    attempt: 0,
    max_member_retries: 0,
  };
}

/** Decides the fork: the n children's specs, or the problems that refuse it. */
export function planFork(input: {
  source: Extract<ForkSourceResult, { ok: true }>;
  definition: AgentDefinition | undefined;
  body: ForkRolloutRequest;
  childIds: readonly string[];
  now: number;
}): ForkPlan {
  const { source, body, childIds } = input;
  const parent = source.spec;
  const refusal = forkRefusal(parent, input.definition);
  if (refusal)
    return { ok: false, status: 422, problems: [{ path: "rollout_id", message: refusal }] };
  const taken = childIds.findIndex((id) => id === parent.rollout_id);
  if (taken >= 0)
    return {
      ok: false,
      status: 409,
      problems: [
        {
          path: `rollout_ids.${taken}`,
          message: `rollout id ${parent.rollout_id} is the parent's`,
        },
      ],
    };
  const step = stepProblem(source, body.at_step);
  if (step) return { ok: false, status: step.status, problems: [step.problem] };
  const merged = childConfig(parent.config, body.config);
  if ("problems" in merged) return { ok: false, status: 422, problems: merged.problems };
  if (body.at_step >= merged.config.max_steps)
    return {
      ok: false,
      status: 422,
      problems: [
        {
          path: "at_step",
          message: `at_step must be below config.max_steps (${merged.config.max_steps}): a child branching there would end at once; raise config.max_steps`,
        },
      ],
    };
  const root = parent.tree?.root ?? parent.rollout_id;
  const path = parent.tree?.path ?? [parent.rollout_id];
  const children = childIds.map((childId, i): RolloutSpec => ({
    rollout_id: childId,
    kind: "driven",
    agent: parent.agent,
    task: parent.task,
    config: { ...merged.config, seed: childSeed(merged.config.seed, childId) },
    group: childGroup(parent.group, childIds, i),
    created_at: input.now,
    runner: null,
    tree: {
      root,
      parent: parent.rollout_id,
      branch_step: body.at_step,
      path: [...path, childId],
      branch_index: i,
      train_shared_prefix: body.train_shared_prefix,
    },
  }));
  return { ok: true, children };
}
