/**
 * @module The load of `bench:routing`: GRPO groups of a long-prefix dialogue agent. Every member
 * of a group shares a long system document and task (the prompt a group is sampled from), then
 * talks for `turns` turns, each call resending the whole conversation, with an environment step
 * between calls. Groups start as earlier ones finish, `concurrency` rollouts at a time, the way
 * an asynchronous RL generator keeps its replicas busy.
 */
import { fnv1a32 } from "../src/fnv1a";
import type { ModelBackend } from "../src/gateway/model-backend";
import type { JsonObject } from "../src/schemas/json";
import { encode } from "../tools/simulator";

/** The shape of one run. */
export interface RoutingWorkload {
  rollouts: number;
  turns: number;
  groupSize: number;
  /** Rollouts in flight at once (whole groups: rounded down to a multiple of `groupSize`). */
  concurrency: number;
  /** Tokens of each group's system document (in the simulator's tokenizer). */
  documentTokens: number;
  /** Tokens per answer (generated to the end: `ignore_eos`). */
  maxTokens: number;
  /** Environment step between two calls of a rollout. */
  thinkMs: number;
  /** Words of the environment's observation each turn adds to the conversation (about one token each). */
  observationWords: number;
}

/** What one policy's run measured. */
export interface WorkloadResult {
  calls: number;
  wallMs: number;
  /** Per call: the replica's time to first token (its per-request metrics: queueing for prefill plus prefill of the uncached tokens). */
  ttftMs: number[];
  /** Per group: first member's first call sent → last member's last answer. */
  groupMs: number[];
  /** Per group (same order as `groupMs`): calls each replica answered for its members. */
  groupReplicas: Array<Map<string, number>>;
  /** Most calls in flight on one replica at any sample (every 20 ms). */
  maxReplicaLoad: number;
  /** Calls answered by each replica. */
  callsPerReplica: Map<string, number>;
}

const WORDS = [
  "people",
  "time",
  "year",
  "work",
  "number",
  "value",
  "result",
  "question",
  "problem",
  "answer",
  "first",
  "other",
  "good",
  "new",
  "day",
  "way",
];

/** `count` words of group `group`'s document: deterministic, different for every group from its first word on. */
function documentWords(group: number, count: number): string {
  const out: string[] = [`Document ${group}.`];
  let state = (group + 1) * 2654435761;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out.push(WORDS[state % WORDS.length]! + (i % 13 === 12 ? "." : ""));
  }
  return out.join(" ");
}

/** Group `group`'s document, about `tokens` tokens long in the simulator's tokenizer. */
export function documentOf(group: number, tokens: number): string {
  let words = Math.max(1, Math.round(tokens / 2));
  for (let round = 0; round < 3; round++) {
    const length = encode(documentWords(group, words)).length;
    if (Math.abs(length - tokens) <= tokens / 100) break;
    words = Math.max(1, Math.round((words * tokens) / length));
  }
  return documentWords(group, words);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs one rollout: `turns` calls over a growing conversation; resolves with its calls' ttft. */
async function runRollout(
  backend: ModelBackend,
  rolloutId: string,
  document: string,
  workload: RoutingWorkload,
  seen: { ttftMs: number[]; callsPerReplica: Map<string, number> },
  groupReplicas: Map<string, number>,
): Promise<void> {
  const messages: JsonObject[] = [
    { role: "system", content: `You answer questions about the document below.\n\n${document}` },
    { role: "user", content: "Summarise the document's first paragraph." },
  ];
  let replica: string | null = null;
  for (let turn = 0; turn < workload.turns; turn++) {
    // No return_token_ids: routing does not need them, and the bench's CPU is better spent elsewhere.
    const body: JsonObject = {
      model: "sim-qwen3",
      messages,
      max_tokens: workload.maxTokens,
      ignore_eos: true,
      include_metrics: true,
    };
    const reply = await backend.request("/chat/completions", body, {
      rolloutId,
      replicaHint: replica,
    });
    replica = reply.replica;
    const answer = reply.body as {
      choices: Array<{ message: { content: string } }>;
      metrics: { time_to_first_token_ms: number };
    };
    seen.ttftMs.push(answer.metrics.time_to_first_token_ms);
    seen.callsPerReplica.set(replica, (seen.callsPerReplica.get(replica) ?? 0) + 1);
    groupReplicas.set(replica, (groupReplicas.get(replica) ?? 0) + 1);
    const observation = documentWords(fnv1a32(`${rolloutId}/${turn}`), workload.observationWords);
    messages.push(
      { role: "assistant", content: answer.choices[0]!.message.content },
      {
        role: "user",
        content: `Observation: ${observation}\nNow explain point ${turn + 2} in more detail.`,
      },
    );
    if (turn + 1 < workload.turns) await sleep(workload.thinkMs);
  }
}

/** Runs every group through `backend` and measures it. */
export async function runWorkload(
  backend: ModelBackend,
  workload: RoutingWorkload,
): Promise<WorkloadResult> {
  const groups = Math.ceil(workload.rollouts / workload.groupSize);
  const slots = Math.max(1, Math.floor(workload.concurrency / workload.groupSize));
  const seen = { ttftMs: [] as number[], callsPerReplica: new Map<string, number>() };
  const groupMs: number[] = [];
  const groupReplicas: Array<Map<string, number>> = [];
  let maxReplicaLoad = 0;
  const sampler = setInterval(() => {
    for (const replica of backend.health?.() ?? [])
      maxReplicaLoad = Math.max(maxReplicaLoad, replica.in_flight);
  }, 20);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < groups) {
      const group = next++;
      const document = documentOf(group, workload.documentTokens);
      const members = Math.min(workload.groupSize, workload.rollouts - group * workload.groupSize);
      const groupStart = performance.now();
      const replicas = new Map<string, number>();
      await Promise.all(
        Array.from({ length: members }, (_, member) =>
          runRollout(backend, `g${group}-m${member}`, document, workload, seen, replicas),
        ),
      );
      groupMs.push(performance.now() - groupStart);
      groupReplicas.push(replicas);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(slots, groups) }, worker));
  } finally {
    clearInterval(sampler);
  }
  return {
    calls: seen.ttftMs.length,
    wallMs: performance.now() - started,
    ttftMs: seen.ttftMs,
    groupMs,
    groupReplicas,
    maxReplicaLoad,
    callsPerReplica: seen.callsPerReplica,
  };
}
