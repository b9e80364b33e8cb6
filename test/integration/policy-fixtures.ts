/**
 * @module The policy object in integration tests. It is a singleton shared by every test of a
 * file (and by rollouts that call the gateway), so tests that change it restore it afterwards
 * and never leave it syncing.
 */
import { objects, type PolicyRpc } from "../../src/runtime/objects/object-directory";
import { POLICY_OBJECT_NAME } from "../../src/runtime/object-names";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import type { ReleasingPolicyPort } from "../../src/gateway/release-on-next-admission";
import type { PolicyState } from "../../src/runtime/policy/policy-state";
import { PolicyStorage } from "../../src/runtime/policy/policy-storage";

/** The PolicyStore stub, typed by its RPC methods. */
export function policy(): PolicyRpc {
  return objects(env).policy();
}

function objectOf() {
  return env.POLICY_STORE.get(env.POLICY_STORE.idFromName(POLICY_OBJECT_NAME));
}

/** The persisted policy state row as the object stores it. */
export function readPolicyState(): Promise<PolicyState> {
  return runInDurableObject(objectOf(), (_instance, state) =>
    new PolicyStorage(state.storage.sql).readState(Date.now()),
  );
}

/**
 * Writes `saved` back (version included, sync cleared) as a newer generation and pushes it to the
 * admission shards: how a test undoes its changes.
 */
export async function restorePolicyState(saved: PolicyState): Promise<void> {
  await runInDurableObject(objectOf(), (_instance, state) => {
    const storage = new PolicyStorage(state.storage.sql);
    const generation = storage.readState(Date.now()).generation + 1;
    storage.writeState({ ...saved, syncing: null, generation, updated_at: Date.now() });
  });
  await policy().republish();
}

/** Admission as the gateway uses it (each rollout id's calls go to its own shard). */
export function admission(): ReleasingPolicyPort {
  return objects(env).admission();
}

/** A call id no other test uses. */
export function uniqueCallId(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}`;
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
