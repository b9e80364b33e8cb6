/**
 * @module External rollouts in GRPO groups of 4: each calls the rollout's gateway (some through a
 * stream it aborts after the first chunk, as a client that gives up would), then finishes.
 */
import type { SoakHttp } from "./soak-http";

interface Created {
  rollout_id: string;
  llm: { base_url: string; api_key: string };
}

/** Reads one chunk of a streamed answer and walks away (the admission must still be released). */
async function abortedStream(http: SoakHttp, path: string, key: string): Promise<void> {
  const controller = new AbortController();
  try {
    const response = await http.send(
      path,
      {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: "Count slowly from one to forty." }],
          stream: true,
          max_tokens: 64,
        }),
        signal: controller.signal,
      },
      3,
    );
    await response.body?.getReader().read();
  } catch {
    // the stack may be down mid-call; the rollout still ends (finish, or its idle watchdog)
  } finally {
    controller.abort();
  }
}

/**
 * Runs one external rollout. Never throws: a create that no answer confirmed is recorded in
 * `failures` and its id still returned, so the checks count it as lost rather than the run dying.
 */
async function runOne(
  http: SoakHttp,
  runId: string,
  group: number,
  index: number,
  failures: string[],
): Promise<string> {
  const rolloutId = `soak-ext-${runId}-${group}-${index}`;
  const created = await http.create<Partial<Created>>(
    "/v1/rollouts",
    {
      agent: "external",
      rollout_id: rolloutId,
      task: { problem: `What is ${group} + ${index}?`, ground_truth: String(group + index) },
      config: { step_timeout_ms: 20_000 },
      group: {
        uid: externalGroupUid(runId, group),
        sample_index: index,
        group_size: 4,
        batch_id: null,
        training_mode: "async",
        data_manager: "train",
      },
    },
    (body) => typeof body.llm?.base_url === "string" && typeof body.llm.api_key === "string",
  );
  if (!created.ok) {
    failures.push(`create ${rolloutId}: ${created.reason}`);
    return rolloutId;
  }
  const { base_url: baseUrl, api_key: key } = created.body.llm!;
  const path = new URL(baseUrl).pathname;
  if (index % 2 === 0) await abortedStream(http, `${path}/chat/completions`, key);
  // Like an OpenAI client, a few attempts only: a call made while the stack is down for longer is
  // given up (the agent still finishes; the rollout records what its gateway answered).
  await http
    .send(
      `${path}/chat/completions`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          messages: [{ role: "user", content: `What is ${group} + ${index}?` }],
          max_tokens: 32,
        }),
      },
      5,
    )
    .catch(() => undefined);
  // A finish that no Worker answered is left to the rollout's idle watchdog, which ends it too.
  await http
    .json(`/v1/rollouts/${rolloutId}/finish`, { reward: index % 2 })
    .catch((error: unknown) => failures.push(`finish ${rolloutId}: ${String(error)}`));
  return rolloutId;
}

/** The GRPO group uid of external group `group` of run `runId`. */
export function externalGroupUid(runId: string, group: number): string {
  return `soak-ext-${runId}-${group}`;
}

/**
 * Runs `groups` groups of 4 external rollouts, `concurrency` rollouts at a time; returns every
 * rollout id it meant to run (created or not) and the creates/finishes that got no answer.
 */
export async function runExternalGroups(
  http: SoakHttp,
  runId: string,
  groups: number,
  concurrency: number,
): Promise<{ ids: string[]; failures: string[] }> {
  const jobs = Array.from({ length: groups * 4 }, (_, i) => [Math.floor(i / 4), i % 4] as const);
  const ids: string[] = [];
  const failures: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        const [group, index] = jobs[next++]!;
        ids.push(await runOne(http, runId, group, index, failures));
      }
    }),
  );
  return { ids, failures };
}
