/**
 * @module The search-workflow example's corpus (a few facts from edge-rollout's own docs) and its
 * two tools: `search` (keyword overlap, best first) and `open_document` (the full text by id).
 */
import type { ToolDefinition } from "../../src/sdk";

/** One document. */
export interface CorpusDocument {
  id: string;
  title: string;
  text: string;
}

/** The whole corpus: small enough to search by scanning. */
export const CORPUS: readonly CorpusDocument[] = [
  {
    id: "gateway-keys",
    title: "Rollout keys",
    text: "A rollout key opens that rollout's gateway and nothing else. A forged key is answered with status 401, another rollout's genuine key with status 403, and the key of a finished rollout with status 409.",
  },
  {
    id: "work-queue",
    title: "Work queue batches",
    text: "A work-queue batch holds at most 6 messages, because production allows 6 simultaneous outgoing connections per invocation and each rollout in a batch has at most one model call in flight.",
  },
  {
    id: "attempts",
    title: "Attempts",
    text: "Function, LitAgent and workflow agents run as attempts. The max_attempts setting defaults to 3 and may be at most 10; a crashed or silent attempt starts the next one.",
  },
  {
    id: "step-limits",
    title: "Step limits",
    text: "A stepwise rollout ends with MAX_STEPS after max_steps steps, which is 5 unless the rollout config says otherwise.",
  },
  {
    id: "training-modes",
    title: "Training modes and staleness",
    text: "verl/hybrid accepts groups at most 0 policy versions old, verl/one_step_off accepts 1, and async accepts 4.",
  },
  {
    id: "gateway-retries",
    title: "Gateway retries",
    text: "The gateway retries transport errors and 5xx answers, 4 attempts in all, with a 250 ms base backoff capped at 4 s.",
  },
];

/** The tools as offered to the model. */
export const SEARCH_TOOLS: ToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "search",
      description:
        "Search the documentation; returns the best matching documents' ids, titles and first words.",
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "keywords" } },
        required: ["query"],
      },
    },
  },
  {
    type: "function",
    function: {
      name: "open_document",
      description: "Return the full text of one document by its id.",
      parameters: {
        type: "object",
        properties: { id: { type: "string", description: "a document id from search" } },
        required: ["id"],
      },
    },
  },
];

const STOPWORDS = new Set([
  "the",
  "and",
  "for",
  "how",
  "many",
  "what",
  "which",
  "does",
  "one",
  "with",
  "that",
  "its",
  "are",
  "most",
]);

function terms(text: string): Set<string> {
  return new Set(
    (text.toLowerCase().match(/[a-z0-9_]+/g) ?? []).filter(
      (word) => word.length >= 3 && !STOPWORDS.has(word),
    ),
  );
}

/** The `topK` documents sharing the most terms with `query` (ties by id); documents sharing none are left out. */
export function searchCorpus(
  query: string,
  topK: number,
): Array<{ id: string; title: string; snippet: string }> {
  const wanted = terms(query);
  return CORPUS.map((doc) => ({
    doc,
    score: [...terms(`${doc.title} ${doc.text}`)].filter((term) => wanted.has(term)).length,
  }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || a.doc.id.localeCompare(b.doc.id))
    .slice(0, topK)
    .map(({ doc }) => ({ id: doc.id, title: doc.title, snippet: `${doc.text.slice(0, 60)}…` }));
}

/**
 * Runs one tool call from its name and raw JSON arguments and returns what the model reads.
 * Bad calls become an `error: …` line (a real tool answers, it does not throw).
 */
export function runSearchTool(name: string, rawArguments: string, topK: number): string {
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(rawArguments) as Record<string, unknown>;
  } catch {
    return "error: arguments must be a JSON object";
  }
  if (name === "search") {
    if (typeof args.query !== "string") return "error: query must be a string";
    const hits = searchCorpus(args.query, topK);
    return hits.length > 0 ? JSON.stringify(hits) : "no results";
  }
  if (name === "open_document") {
    const doc = CORPUS.find((candidate) => candidate.id === args.id);
    return doc ? JSON.stringify(doc) : `error: no document "${String(args.id)}"`;
  }
  return `error: unknown tool "${name}"`;
}

/** Questions about the corpus and their labels. */
export const SEARCH_TASKS = [
  { problem: "How many messages does one work-queue batch hold at most?", ground_truth: "6" },
  { problem: "Which HTTP status answers another rollout's genuine key?", ground_truth: "403" },
  { problem: "What is the default max_attempts of a function agent?", ground_truth: "3" },
] as const;
