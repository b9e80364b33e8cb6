/** @module `edge-rollout doctor`: is this machine and this deployment ready to run rollouts, and what to fix. */
import { readFileSync } from "node:fs";
import type { PolicyView } from "../../../src/schemas/policy";
import type { ApiClient } from "../api-client";
import { checkNode, checkServer, checkStack, policyServers, type Check } from "../doctor-checks";
import { ExitCode } from "../errors";
import type { Output } from "../output";

/** The engines range of this package's package.json. */
function enginesRange(): string | undefined {
  const pkg = JSON.parse(
    readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
  ) as { engines?: { node?: string } };
  return pkg.engines?.node;
}

const MARK: Record<Check["status"], string> = {
  ok: "[ok]  ",
  warn: "[warn]",
  fail: "[FAIL]",
  skip: "[skip]",
};

/** The checks as a checklist, then what to fix. */
export function formatChecks(checks: Check[]): string {
  const lines = checks.map((check) => `${MARK[check.status]} ${check.name}: ${check.detail}`);
  const fixes = checks.filter(
    (check) => check.fix && (check.status === "fail" || check.status === "warn"),
  );
  lines.push("", fixes.length === 0 ? "all checks passed" : `to fix (${fixes.length}):`);
  for (const check of fixes) lines.push(`  - ${check.name}: ${check.fix}`);
  return lines.join("\n");
}

/**
 * Checks Node against package.json's engines, the stack's /health and API access, the policy, and
 * each model server the policy routes to (`--model-url` for the deployment default, which the API
 * does not expose). Exit 0 when nothing failed, 3 when the stack is unreachable, else 1.
 */
export async function runDoctor(
  options: { modelUrls: string[] },
  client: ApiClient,
  out: Output,
): Promise<ExitCode> {
  const checks: Check[] = [checkNode(process.version, enginesRange())];
  const stack = await checkStack(client);
  checks.push(...stack.checks);
  if (stack.checks.every((check) => check.status !== "fail")) {
    const policy = await client.get<PolicyView>("/v1/policy");
    const routed = policyServers(policy);
    const syncing = policy.syncing
      ? " (a weight sync is under way: model calls wait until it ends)"
      : "";
    checks.push({
      name: "policy",
      status: policy.syncing ? "warn" : "ok",
      detail: `version ${policy.policy_version}, backend ${policy.backend?.name ?? "deployment default (LLM_BASE_URL)"}${syncing}`,
    });
    const servers = routed?.servers.length ? routed.servers : options.modelUrls;
    if (servers.length === 0) {
      checks.push({
        name: "model servers",
        status: "skip",
        detail: "the policy uses the deployment's LLM_BASE_URL, which the API does not expose",
        fix: "pass --model-url (or set EDGE_ROLLOUT_MODEL_URL) to check it",
      });
    }
    for (const server of servers)
      checks.push(
        ...(await checkServer(server, {
          model: policy.model,
          ...(routed?.apiKey ? { apiKey: routed.apiKey } : {}),
          expectTokenIds: routed?.tokenIds ?? true,
        })),
      );
  }
  const failed = checks.filter((check) => check.status === "fail").length;
  out.result({ ok: failed === 0, checks }, () => formatChecks(checks));
  if (stack.unreachable) return ExitCode.unreachable;
  return failed === 0 ? ExitCode.ok : ExitCode.failure;
}
