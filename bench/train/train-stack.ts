/**
 * @module The trainer's view of the local stack in `npm run bench:train`: which replicas the
 * Worker's `vllm` backend routes to (set per mode through `PUT /v1/policy`), a group as n streamed
 * gateway calls of external rollouts, and weight syncs through `/v1/policy/sync/begin|end`.
 */
import { fetchAgain } from "../kit/fetch-again";
import type { GroupEnd, TrainerStack } from "./train-loop";

/** JSON from the Worker (requests safe to repeat on a closed socket). */
async function json(url: string, init?: RequestInit): Promise<any> {
  const response = await fetchAgain(url, {
    ...init,
    headers: { "content-type": "application/json" },
  });
  const body = await response.json();
  if (!response.ok)
    throw new Error(`${init?.method ?? "GET"} ${url}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * Points the Worker's backend at `replicas` (simulator root URLs), least-loaded: every call is one
 * turn, so there is no prefix to keep on a replica, and an even load is what data-parallel
 * replicas behind a balancer get. Checks that the policy now names them.
 */
export async function routeTo(workerUrl: string, replicas: string[]): Promise<void> {
  const backend = {
    name: "vllm",
    replicas: replicas.map((url) => `${url}/v1`),
    routing: { policy: "least_loaded" },
  };
  await json(`${workerUrl}/v1/policy`, { method: "PUT", body: JSON.stringify({ backend }) });
  const now = await json(`${workerUrl}/v1/policy`);
  if (JSON.stringify(now.backend?.replicas) !== JSON.stringify(backend.replicas))
    throw new Error(`the policy did not take the replicas: ${JSON.stringify(now.backend)}`);
}

/** Completion tokens in a streamed answer's text: the ids of every chunk's non-empty `token_ids` list. */
function countTokens(text: string): number {
  return (text.match(/"token_ids":\[[^\]]*\]/g) ?? []).reduce(
    (n, ids) => n + (ids.length > 13 ? ids.split(",").length : 0),
    0,
  );
}

interface Rollout {
  llm: { base_url: string; api_key: string };
}

/** Options of one mode run's stack. */
export interface RunStackOptions {
  workerUrl: string;
  /** Every replica's root URL: a sync loads the new version into all of them. */
  replicas: string[];
  /** Samples per group (GRPO's n). */
  n: number;
  /** Unique per run: the batch part of the rollout ids, so the sample keys are `<group>:<member>`. */
  runId: string;
  /** Groups whose rollouts are created ahead of their calls, off the critical path. */
  createAhead: number;
}

/**
 * The stack of one mode run. Rollout `<runId>:<group>:<member>` carries sample key
 * `<group>:<member>` (src/gateway/sample-key.ts), and group g's prompt names g, so member m of
 * group g has the same length in every mode and repeat, whichever replica serves it.
 */
export function runStack(options: RunStackOptions): TrainerStack {
  const { workerUrl, replicas, n, runId, createAhead } = options;
  const created = new Map<number, Promise<Rollout[]>>();
  /** Creates one rollout; repeated on a network error (creation is idempotent by rollout id). */
  const create = async (group: number, member: number): Promise<Rollout> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await json(`${workerUrl}/v1/rollouts`, {
          method: "POST",
          body: JSON.stringify({
            rollout_id: `${runId}:${group}:${member}`,
            agent: "external",
            task: { problem: `group ${group}` },
            config: {
              max_response_length: 1_000_000,
              rollout_timeout_ms: 3_600_000,
              step_timeout_ms: 3_600_000,
            },
          }),
        });
      } catch (error) {
        // A loaded local workerd now and then resets a connection (ECONNRESET) more than twice.
        if (attempt >= 6 || !(error instanceof TypeError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  };
  const rolloutsOf = (group: number): Promise<Rollout[]> => {
    let rollouts = created.get(group);
    if (!rollouts) {
      rollouts = Promise.all(Array.from({ length: n }, (_, member) => create(group, member)));
      created.set(group, rollouts);
      // Created ahead of its call: a failure surfaces (and is retried) when the group runs.
      rollouts.catch(() => created.delete(group));
    }
    return rollouts;
  };

  async function call(rollout: Rollout, group: number, signal?: AbortSignal): Promise<number> {
    let text = "";
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await fetch(`${rollout.llm.base_url}/chat/completions`, {
          method: "POST",
          signal,
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${rollout.llm.api_key}`,
          },
          body: JSON.stringify({
            model: "any",
            stream: true,
            max_tokens: 4096,
            messages: [{ role: "user", content: `Write the answer of group ${group}.` }],
          }),
        });
        if (response.status === 429) {
          // Weights are syncing (a drain sync refuses new calls): wait as a client honouring Retry-After does.
          await response.arrayBuffer();
          await new Promise((resolve) => setTimeout(resolve, 50));
          continue;
        }
        if (!response.ok)
          throw new Error(
            `gateway answered ${response.status}: ${(await response.text()).slice(0, 300)}`,
          );
        // Read as it comes, so a group the trainer gives up on still counts the tokens it got.
        const decoder = new TextDecoder();
        for await (const chunk of response.body!) text += decoder.decode(chunk, { stream: true });
        return countTokens(text);
      } catch (error) {
        if (signal?.aborted) return countTokens(text);
        // A call the loaded local stack drops is retried (bounded), from nothing: the rollout's
        // sample key gives the retry the same outcome.
        if (attempt >= 3 || text !== "") throw error;
      }
    }
  }

  return {
    async group(index, signal) {
      for (let ahead = 1; ahead <= createAhead; ahead++) void rolloutsOf(index + ahead);
      const rollouts = await rolloutsOf(index);
      const tokens = await Promise.all(rollouts.map((rollout) => call(rollout, index, signal)));
      return { tokens, aborted: signal?.aborted ?? false } satisfies GroupEnd;
    },
    async sync(mode, nextVersion) {
      const t = performance.now();
      await json(`${workerUrl}/v1/policy/sync/begin`, {
        method: "POST",
        body: JSON.stringify({ mode, wait_ms: 600_000 }),
      });
      const waited = performance.now() - t;
      await Promise.all(
        replicas.map((url) =>
          json(`${url}/sim/config`, {
            method: "PUT",
            body: JSON.stringify({ policyVersion: nextVersion }),
          }),
        ),
      );
      const ended = await fetchAgain(`${workerUrl}/v1/policy/sync/end`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ policy_version: nextVersion }),
      });
      await ended.arrayBuffer();
      // A repeated end (its first answer lost with its connection) finds the version already in force.
      if ((await json(`${workerUrl}/v1/policy`)).policy_version !== nextVersion)
        throw new Error(`sync/end to ${nextVersion} failed (${ended.status})`);
      return waited;
    },
  };
}
