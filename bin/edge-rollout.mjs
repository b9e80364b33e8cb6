#!/usr/bin/env node
// The `edge-rollout` command. The CLI is TypeScript run through tsx (a runtime dependency of this
// package), so there is no build step: `npm ci` and it works.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
const code = await main(process.argv.slice(2));
// Exit now: an idle keep-alive socket or a finished child must not keep the process alive.
process.exit(code);
