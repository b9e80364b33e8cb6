/**
 * @module Command line for the vLLM simulator, for tests and benches that run in another process.
 *
 * @example
 * npx tsx tools/simulator/cli.ts --port 8000 --latency-ttft-ms 20 --latency-per-token-ms 5
 */
import { USAGE, parseCliOptions } from "./cli-options";
import { startVllmSimulator } from "./server";

async function main(): Promise<void> {
  const options = parseCliOptions(process.argv.slice(2));
  if (options === "help") {
    console.log(USAGE);
    return;
  }
  const started = performance.now();
  const simulator = await startVllmSimulator(options);
  console.log(simulator.url);
  // On stderr: callers read the URL as the first stdout line.
  console.error(
    `vLLM simulator: tokenizer ${simulator.tokenizer} (ready in ${Math.round(performance.now() - started)} ms)`,
  );
  const stop = (): void => {
    void simulator.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  console.error(USAGE);
  // 2 for a usage error (unknown flag, missing value, bad number), as every command of ours.
  const usage =
    error instanceof RangeError ||
    (error instanceof Error && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"));
  process.exit(usage ? 2 : 1);
});
