/**
 * @module The load of `bench:routing`: GRPO groups of a long-prefix dialogue agent. Every member
 * of a group shares a long document and task (the prompt a group is sampled from), after a system
 * prompt every group shares when `sharedPromptTokens` > 0, then talks for `turns` turns, each call
 * resending the whole conversation, with an environment step between calls. Groups start as
 * earlier ones finish, `concurrency` rollouts at a time (with `concurrency` = `rollouts`, one
 * batch at once, as a synchronous generator sends it).
 */
import { fnv1a32 } from "../../src/fnv1a";
import type { JsonObject } from "../../src/schemas/json";
import { encode } from "../../tools/simulator";

/** The shape of one run. */
export interface RoutingWorkload {
  rollouts: number;
  turns: number;
  groupSize: number;
  /** Rollouts in flight at once (whole groups: rounded down to a multiple of `groupSize`). */
  concurrency: number;
  /** Tokens of each group's own document (in the simulator's tokenizer). */
  documentTokens: number;
  /** Tokens of a system prompt every group shares, before the group's document; 0: none (the document is the system prompt). */
  sharedPromptTokens: number;
  /** Tokens per answer (generated to the end: `ignore_eos`). */
  maxTokens: number;
  /** Environment step between two calls of a rollout. */
  thinkMs: number;
  /** Words of the environment's observation each turn adds to the conversation (about one token each). */
  observationWords: number;
}

/** One call's reply as the bench needs it. */
export interface RoutedReply {
  content: string;
  /** The replica that answered, where the path reports it (null through the Worker, which keeps it in the session). */
  replica: string | null;
  /** The replica's time to first token (its per-request metrics), where the path returns them. */
  ttftMs: number | null;
}

/** The path a call takes to the replicas: routers in this process, or the Worker's gateway. */
export interface RoutingCaller {
  /** Sends one chat call of rollout `rolloutId` (a member label, `g<group>-m<member>`); `hint` is its last replica. */
  call(rolloutId: string, body: JsonObject, hint: string | null): Promise<RoutedReply>;
  /** Most calls in flight on one replica now, all isolates together; absent where the path cannot see it. */
  maxReplicaLoad?(): number;
}

/** What one policy's run measured. */
export interface WorkloadResult {
  calls: number;
  wallMs: number;
  /** Per call that reported one: the replica's time to first token (queueing for prefill plus prefill of the uncached tokens). */
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

/** The system prompt every group shares (`sharedPromptTokens`): one text, unlike any group's document. */
export function sharedPromptOf(tokens: number): string {
  return `Instructions. ${documentOf(1_000_003, tokens)}`;
}

/** The first two messages of every member of group `group`: what its members share. */
function openingMessages(group: number, workload: RoutingWorkload): JsonObject[] {
  const document = documentOf(group, workload.documentTokens);
  const task = "Summarise the document's first paragraph.";
  if (workload.sharedPromptTokens <= 0)
    return [
      { role: "system", content: `You answer questions about the document below.\n\n${document}` },
      { role: "user", content: task },
    ];
  return [
    { role: "system", content: sharedPromptOf(workload.sharedPromptTokens) },
    { role: "user", content: `${document}\n\n${task}` },
  ];
}

interface Seen {
  calls: number;
  ttftMs: number[];
  callsPerReplica: Map<string, number>;
}

/** Runs one rollout: `turns` calls over a growing conversation. */
async function runRollout(
  caller: RoutingCaller,
  rolloutId: string,
  opening: JsonObject[],
  workload: RoutingWorkload,
  seen: Seen,
  groupReplicas: Map<string, number>,
): Promise<void> {
  const messages = [...opening];
  let replica: string | null = null;
  for (let turn = 0; turn < workload.turns; turn++) {
    // No return_token_ids: routing does not need them (the Worker's gateway adds them, as it always does).
    const body: JsonObject = {
      model: "sim-qwen3",
      messages,
      max_tokens: workload.maxTokens,
      ignore_eos: true,
      include_metrics: true,
    };
    const reply = await caller.call(rolloutId, body, replica);
    seen.calls++;
    if (reply.ttftMs !== null) seen.ttftMs.push(reply.ttftMs);
    if (reply.replica !== null) {
      replica = reply.replica;
      seen.callsPerReplica.set(replica, (seen.callsPerReplica.get(replica) ?? 0) + 1);
      groupReplicas.set(replica, (groupReplicas.get(replica) ?? 0) + 1);
    }
    const observation = documentWords(fnv1a32(`${rolloutId}/${turn}`), workload.observationWords);
    messages.push(
      { role: "assistant", content: reply.content },
      {
        role: "user",
        content: `Observation: ${observation}\nNow explain point ${turn + 2} in more detail.`,
      },
    );
    if (turn + 1 < workload.turns) await sleep(workload.thinkMs);
  }
}

/** The member labels of every rollout the workload runs (`g<group>-m<member>`), in order. */
export function rolloutLabels(workload: RoutingWorkload): string[] {
  return Array.from({ length: workload.rollouts }, (_, i) => {
    const group = Math.floor(i / workload.groupSize);
    return `g${group}-m${i - group * workload.groupSize}`;
  });
}

/** Runs every group through `caller` and measures it. */
export async function runWorkload(
  caller: RoutingCaller,
  workload: RoutingWorkload,
): Promise<WorkloadResult> {
  const groups = Math.ceil(workload.rollouts / workload.groupSize);
  const slots = Math.max(1, Math.floor(workload.concurrency / workload.groupSize));
  const seen: Seen = { calls: 0, ttftMs: [], callsPerReplica: new Map() };
  const groupMs: number[] = [];
  const groupReplicas: Array<Map<string, number>> = [];
  let maxReplicaLoad = 0;
  const sampler = setInterval(() => {
    maxReplicaLoad = Math.max(maxReplicaLoad, caller.maxReplicaLoad?.() ?? 0);
  }, 20);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < groups) {
      const group = next++;
      const opening = openingMessages(group, workload);
      const members = Math.min(workload.groupSize, workload.rollouts - group * workload.groupSize);
      const groupStart = performance.now();
      const replicas = new Map<string, number>();
      await Promise.all(
        Array.from({ length: members }, (_, member) =>
          runRollout(caller, `g${group}-m${member}`, opening, workload, seen, replicas),
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
    calls: seen.calls,
    wallMs: performance.now() - started,
    ttftMs: seen.ttftMs,
    groupMs,
    groupReplicas,
    maxReplicaLoad,
    callsPerReplica: seen.callsPerReplica,
  };
}
