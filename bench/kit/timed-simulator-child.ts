/**
 * @module Child-process entry: the vLLM simulator CLI, with the service time of every chat call
 * recorded inside the simulator's own process and handed to the parent over IPC.
 *
 * Service time = from Node's `request` event (headers parsed) to the response's `finish` (last
 * byte handed to the kernel): the simulator's modelled latency plus its own parsing, templating
 * and JSON work, without any client or network time. Instrumenting `http.Server#emit` here keeps
 * the product's simulator untouched.
 */
import http from "node:http";

const serviceMs: number[] = [];
const emit = http.Server.prototype.emit;

http.Server.prototype.emit = function timedEmit(
  this: http.Server,
  event: string | symbol,
  ...args: unknown[]
): boolean {
  if (event === "request") {
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    if (req.method === "POST" && req.url?.endsWith("/chat/completions")) {
      const start = performance.now();
      res.once("finish", () => serviceMs.push(performance.now() - start));
    }
  }
  return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
} as typeof emit;

// "take" returns the service times recorded since the previous take.
process.on("message", (message) => {
  if (message === "take") process.send?.({ serviceMs: serviceMs.splice(0) });
});
// Never outlive the benchmark that started us.
process.on("disconnect", () => process.exit(0));

await import("../../tools/simulator/cli");
