/**
 * @module
 * Postinstall fix for @cloudflare/vitest-pool-workers (issue 27): its entrypoint wrappers wrap
 * their class's prototype in one more Proxy on EVERY construction, so after n constructions a
 * property lookup walks n nested Proxies. workerd constructs the default entrypoint once per
 * `exports.default.fetch` / `SELF.fetch` and a Durable Object class once per object, so in one
 * workerd each request cost more than the one before: measured here, /health went from 3 ms to
 * 200 ms per request over 800 requests, and the route fuzz (1,316 requests) spent most of its
 * 90 s there. Upstream (cloudflare/workers-sdk, packages/vitest-plugin/src/worker/entrypoints.ts,
 * createProxyPrototypeClass) still has it; see workers-sdk issue 15446 for the symptom.
 *
 * The fix proxies the prototype once, on the first construction (workerd must still see a plain
 * class when it inspects the export, which is why upstream delays the Proxy to construction).
 * Idempotent; runs on `npm ci` / `npm install` (package.json "postinstall"). If the pinned
 * version's code is not found (a version bump), it says so and leaves the file alone: the tests
 * stay correct, only slower, and this script must then be updated or dropped.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const file = join(
  root,
  "node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs",
);

const BROKEN = "\tfunction Class(...args) {\n\t\tClass.prototype = new Proxy(Class.prototype, {";
const FIXED =
  "\tlet proxied = false; // patched by edge-rollout scripts/patch-vitest-pool-workers.mjs: one Proxy, not one per construction\n\tfunction Class(...args) {\n\t\tif (!proxied && (proxied = true)) Class.prototype = new Proxy(Class.prototype, {";

if (!existsSync(file)) {
  // Installed without devDependencies (npm ci --omit=dev): no tests run, nothing to patch.
  process.exit(0);
}
const source = readFileSync(file, "utf8");
if (source.includes(FIXED)) process.exit(0);
const at = source.indexOf(BROKEN);
if (at < 0 || source.indexOf(BROKEN, at + 1) >= 0) {
  console.warn(
    `patch-vitest-pool-workers: createProxyPrototypeClass not found as expected in ${file}; left unpatched (workerd tests run, but each SELF.fetch gets slower): update scripts/patch-vitest-pool-workers.mjs`,
  );
  process.exit(0);
}
writeFileSync(file, source.replace(BROKEN, FIXED));
