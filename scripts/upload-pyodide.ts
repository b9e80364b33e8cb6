/** @module `npx tsx scripts/upload-pyodide.ts`: puts Pyodide's files into the TRAJECTORIES bucket, where the Worker's LOADER path reads them for `language: "python"`. */
import { spawnSync } from "node:child_process";
import { commandLine } from "./command-line";
import { pyodideUploads, wranglerPutArgs } from "./pyodide-uploads";

const values = commandLine({
  usage: "npx tsx scripts/upload-pyodide.ts (--remote | --local [--persist-to <dir>]) [options]",
  description:
    "Uploads node_modules/pyodide's five files (12 MB) under sandbox/pyodide/<version>/ with `wrangler r2 object put`, so runCode({ language: \"python\" })\nruns on the Worker's own LOADER binding (docs/production.md). The memory snapshot beside them is made and stored by the Worker's first Python call.",
  flags: {
    remote: {
      type: "boolean",
      default: false,
      help: "into the deployed bucket (wrangler's login or CLOUDFLARE_API_TOKEN)",
    },
    local: {
      type: "boolean",
      default: false,
      help: "into a local state dir, for a Worker run without the sandbox host (a bare `npx wrangler dev`)",
    },
    "persist-to": {
      type: "string",
      default: ".wrangler/state",
      placeholder: "dir",
      help: "the local state dir (wrangler dev's default; a stack's is <state dir>/state)",
    },
    bucket: {
      type: "string",
      default: "edge-rollout-trajectories",
      placeholder: "name",
      help: "the bucket TRAJECTORIES is bound to in wrangler.toml",
    },
    "dry-run": {
      type: "boolean",
      default: false,
      help: "print the commands instead of running them",
    },
  },
});

if (values.remote === values.local) {
  console.error(
    "pass exactly one of --remote and --local (npx tsx scripts/upload-pyodide.ts --help)",
  );
  process.exit(2);
}
const target = values.remote
  ? ({ remote: true } as const)
  : ({ remote: false, persistTo: values["persist-to"] } as const);
for (const upload of pyodideUploads()) {
  const args = wranglerPutArgs(values.bucket, upload, target);
  console.log(`npx ${args.join(" ")}`);
  if (values["dry-run"]) continue;
  const done = spawnSync("npx", args, { stdio: "inherit" });
  if (done.status !== 0) process.exit(done.status ?? 1);
}
