/** @module Tree rollouts: where a forked rollout sits in its tree, and the fork request's body. */
import { z } from "zod";
import { JsonObject } from "./json";
import { RolloutId } from "./rollout-id";

/** Most children one fork request makes (the issue's bound; each child is one Durable Object write of the whole prefix). */
export const MAX_FORK_CHILDREN = 64;

/**
 * Where a forked rollout sits: the first rollout of its tree (`root`), the rollout it was forked
 * from (`parent`), the step it branched at (`branch_step`: its steps `0..branch_step-1` are the
 * parent's), and the rollout ids from the root down to itself (`path`, root first, itself last).
 * `branch_index` is which of the fork's `n` children it is. `train_shared_prefix` says whether
 * the shared steps' completions are trained in its samples (mask 1) or context (mask 0, default):
 * the parent's samples already train them once.
 */
export const RolloutTree = z
  .object({
    root: z.string().min(1),
    parent: z.string().min(1),
    branch_step: z.int().min(0),
    path: z.array(z.string().min(1)).min(2),
    branch_index: z.int().min(0),
    train_shared_prefix: z.boolean().default(false),
  })
  .strict();
export type RolloutTree = z.infer<typeof RolloutTree>;

/**
 * `POST /v1/rollouts/:id/fork`. `config` overrides fields of the parent's config for the children
 * (validated merged with it, so an unknown or invalid field is named `config.<field>`); the
 * children's seed, when the merged config has one, is derived per child (else all n would sample
 * the same continuation).
 */
export const ForkRolloutRequest = z
  .object({
    at_step: z.int("at_step must be an integer").min(0, "at_step must be >= 0"),
    n: z
      .int("n must be an integer")
      .min(1, "n must be >= 1")
      .max(MAX_FORK_CHILDREN, `n must be <= ${MAX_FORK_CHILDREN}`)
      .default(1),
    rollout_ids: z.array(RolloutId).optional(),
    config: JsonObject.optional(),
    /** Train the shared prefix's completions in the children's samples too (mask 1). Default false. */
    train_shared_prefix: z.boolean().default(false),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (!body.rollout_ids) return;
    if (body.rollout_ids.length !== body.n)
      ctx.addIssue({
        code: "custom",
        path: ["rollout_ids"],
        message: `rollout_ids must hold n (${body.n}) ids, got ${body.rollout_ids.length}`,
      });
    const seen = new Set<string>();
    body.rollout_ids.forEach((id, i) => {
      if (seen.has(id))
        ctx.addIssue({
          code: "custom",
          path: ["rollout_ids", i],
          message: `rollout id ${id} appears twice`,
        });
      seen.add(id);
    });
  });
export type ForkRolloutRequest = z.infer<typeof ForkRolloutRequest>;

/**
 * Most children a parent lists (`RolloutView.forks`); forks past it still work, and are counted in
 * the last record's `unlisted`. Bounded so the list stays one small SQLite value (ids are ≤ 200 characters).
 */
export const MAX_LISTED_FORK_CHILDREN = 1024;

/** One fork of a rollout, as the parent lists it: the step branched at and the children made. */
export const ForkRecord = z.object({
  at_step: z.int().min(0),
  children: z.array(z.string().min(1)),
  /** Children made by this fork but not listed (past MAX_LISTED_FORK_CHILDREN). */
  unlisted: z.int().min(0).default(0),
  created_at: z.number(),
});
export type ForkRecord = z.infer<typeof ForkRecord>;
