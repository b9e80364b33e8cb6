/**
 * @module
 * Postinstall fix for Miniflare's local queue broker (the queues that `npm start`, the benches and
 * the soak run on): a broker stopped dispatching for good once one flush threw. Its `#flush` logs
 * each batch through a fetch to Miniflare's Node loopback (`logWithLevel`) and only then clears
 * `#pendingFlush`; when that fetch fails (a reset on a keep-alive connection the Node side is
 * closing, likelier while the Node process is busy), the flush rejects with `#pendingFlush` still
 * set as "immediate", so `#ensurePendingFlush` returns early for every later message and the queue
 * holds its messages forever. Measured here: `bench:drain --from-worker` at 2,048 rollouts stopped
 * ingesting at 864 (and at 384 in an earlier run) with workerd idle and every session published;
 * cloudflare/workers-sdk issue 4639 reports the same symptom ("processing seems to stop and queue
 * no longer consumes"). The fix: a log that fails is dropped, never thrown, and a flush that throws
 * for any other reason still clears its pending state and schedules the next.
 *
 * Idempotent; runs on `npm ci` / `npm install` (package.json "postinstall"). If the pinned
 * version's code is not found (a version bump), it says so and leaves the file alone.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const MARK = "patched by edge-rollout scripts/patch-miniflare-queue-broker.mjs";

const patches = [
  {
    file: "node_modules/miniflare/dist/src/workers/shared/index.worker.js",
    from: "  async logWithLevel(level, message) {\n    await this.env[SharedBindings.MAYBE_SERVICE_LOOPBACK]?.fetch(",
    to: `  async logWithLevel(level, message) {\n    // ${MARK}: a log that cannot be delivered is dropped, never thrown into the caller's work\n    await this.env[SharedBindings.MAYBE_SERVICE_LOOPBACK]?.fetch(`,
    after: "\n    );\n  }\n  async #handleControlOp",
    afterTo: "\n    ).then(() => undefined, () => undefined);\n  }\n  async #handleControlOp",
  },
  {
    file: "node_modules/miniflare/dist/src/workers/queues/broker.worker.js",
    from: "  #flush = async () => {\n    let consumer = this.#maybeConsumer;",
    to: `  #flush = async () => {\n    // ${MARK}: a flush that throws must not leave #pendingFlush set, or the queue never flushes again\n    try {\n      await this.#flushOnce();\n    } catch (error) {\n      console.error("queue broker flush failed; scheduling the next", String(error));\n      this.#pendingFlush = void 0;\n      if (this.#messages.length > 0) this.#ensurePendingFlush();\n    }\n  };\n  #flushOnce = async () => {\n    let consumer = this.#maybeConsumer;`,
  },
];

for (const patch of patches) {
  const file = join(root, patch.file);
  if (!existsSync(file)) continue; // installed without Miniflare: nothing to patch
  let source = readFileSync(file, "utf8");
  if (source.includes(MARK)) continue;
  const at = source.indexOf(patch.from);
  const afterAt = patch.after === undefined ? 0 : source.indexOf(patch.after, at);
  if (at < 0 || source.indexOf(patch.from, at + 1) >= 0 || afterAt < 0) {
    console.warn(
      `patch-miniflare-queue-broker: expected code not found in ${patch.file}; left unpatched (a local queue can stall after a failed log): update scripts/patch-miniflare-queue-broker.mjs`,
    );
    continue;
  }
  if (patch.after !== undefined)
    source = source.slice(0, afterAt) + patch.afterTo + source.slice(afterAt + patch.after.length);
  source = source.replace(patch.from, patch.to);
  writeFileSync(file, source);
}
// A missing patch only warns: tests and stacks still run, a long local run may stall as before.
process.exit(0);
