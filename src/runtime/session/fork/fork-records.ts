/**
 * @module The forks a parent lists (`RolloutView.forks`): one `meta` value, written after its
 * children exist, so the parent's page links them. Only the list changes: never a step, call,
 * span or the state of the parent.
 */
import type { SqlPort } from "../../../ports";
import { ForkRecord, MAX_LISTED_FORK_CHILDREN } from "../../../schemas/rollout-tree";
import { readMetaText, writeMetaText } from "../../meta-table";

const FORKS_KEY = "forks";

/** The forks listed so far, oldest first (none when the rollout was never forked). */
export function readForks(sql: SqlPort): ForkRecord[] {
  const text = readMetaText(sql, FORKS_KEY);
  return text === undefined ? [] : ForkRecord.array().parse(JSON.parse(text));
}

/**
 * Lists a fork's children. Idempotent: children listed before (a retried fork) are not listed
 * again, and a fork adding none writes nothing. Past MAX_LISTED_FORK_CHILDREN children in all, the
 * rest are only counted (`unlisted`; a retried fork there counts its children again), which keeps
 * the value small.
 */
export function appendFork(
  sql: SqlPort,
  atStep: number,
  childIds: readonly string[],
  now: number,
): ForkRecord[] {
  const forks = readForks(sql);
  const listed = new Set(forks.flatMap((fork) => fork.children));
  const fresh = childIds.filter((id) => !listed.has(id));
  if (fresh.length === 0) return forks;
  const room = Math.max(0, MAX_LISTED_FORK_CHILDREN - listed.size);
  const record = ForkRecord.parse({
    at_step: atStep,
    children: fresh.slice(0, room),
    unlisted: Math.max(0, fresh.length - room),
    created_at: now,
  });
  const next = [...forks, record];
  writeMetaText(sql, FORKS_KEY, JSON.stringify(next));
  return next;
}
