import OpenAI from "openai";
import { startLocalStack } from "./scripts/local-stack";
const stack = await startLocalStack({ workerPort: 8821, stateDir: ".tmp/ext", simulator: { port: 0 } });
try {
  const created = await (await fetch(`${stack.workerUrl}/v1/rollouts`, { method: "POST", body: JSON.stringify({ agent: "external", task: { problem: "x" } }) })).json() as any;
  console.log(created);
  const client = new OpenAI({ baseURL: created.llm.base_url, apiKey: created.llm.api_key });
  const r1 = await client.chat.completions.create({ model: "anything", messages: [{ role: "user", content: "What is 2 + 3?" }] });
  console.log("nonstream:", r1.choices[0]!.message.content, (r1 as any).prompt_token_ids?.length);
  const stream = await client.chat.completions.create({ model: "x", messages: [{ role: "user", content: "Use the calculator: 4 * 5" }], stream: true, tools: [{ type: "function", function: { name: "calculate", parameters: { type: "object", properties: { expression: { type: "string" } } } } }] });
  let n = 0; for await (const chunk of stream) { n++; }
  console.log("stream chunks", n);
  const models = await client.models.list(); console.log("models", models.data.map((m) => m.id));
  const bad = new OpenAI({ baseURL: created.llm.base_url, apiKey: "erk.x.y", maxRetries: 0 });
  await bad.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }] }).catch((e) => console.log("bad key:", e.status, e.message));
  const fin = await (await fetch(`${stack.workerUrl}/v1/rollouts/${created.rollout_id}/events`, { method: "POST", body: JSON.stringify({ events: [{ kind: "reward", value: 0.5 }] }) })).json();
  console.log("events", fin);
  console.log("finish", await (await fetch(`${stack.workerUrl}/v1/rollouts/${created.rollout_id}/finish`, { method: "POST", body: JSON.stringify({}) })).json());
  await client.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }] }, { maxRetries: 0 }).catch((e) => console.log("finished:", e.status, e.message));
  const view = await (await fetch(`${stack.workerUrl}/v1/rollouts/${created.rollout_id}`)).json() as any;
  console.log(view.status, view.reward, view.termination_reason, view.llm_calls.map((c: any) => [c.prompt_token_ids.length, c.completion_token_ids.length, c.logprobs.length, c.finish_reason, JSON.stringify(c.response_message).slice(0, 120)]), view.spans);
} finally { await stack.stop(); }
