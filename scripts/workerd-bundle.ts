/** @module How code is bundled for workerd, the way wrangler does it: one ESM file, Worker-first package fields. */
import type { BuildOptions } from "esbuild";

/** esbuild options every bundle for workerd shares (the Worker, the sandbox host's Worker). */
export const WORKERD_ESM = {
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  conditions: ["workerd", "worker", "browser"],
  mainFields: ["workerd", "worker", "browser", "module", "main"],
} as const satisfies BuildOptions;
