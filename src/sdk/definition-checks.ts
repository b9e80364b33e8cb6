/** @module Checks every attempt-style agent definition gets at registration. */
import { destructuredKeys } from "./context-keys";
import type { ResourceSpecs } from "./resources";

/** Names the policy's resource store accepts (as `PUT /v1/resources/:name` does). */
const RESOURCE_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Throws a TypeError naming the agent when a declared resource shadows a context field, has a name
 * the resource store would refuse, or has no default.
 */
export function checkResourceSpecs(
  agent: string,
  resources: ResourceSpecs,
  reserved: readonly string[],
): void {
  for (const [key, spec] of Object.entries(resources)) {
    if (reserved.includes(key))
      throw new TypeError(
        `agent "${agent}": resource "${key}" would hide the context field of that name (${reserved.join(", ")}); declare it under another key`,
      );
    const name = spec?.name ?? key;
    if (!RESOURCE_NAME.test(name))
      throw new TypeError(
        `agent "${agent}": resource "${key}" has name "${name}", which must match ${RESOURCE_NAME}`,
      );
    if (typeof spec?.parse !== "function" || !("default" in spec))
      throw new TypeError(
        `agent "${agent}": resource "${key}" must be declared with promptTemplate(…), jsonResource(…) or another ResourceSpec`,
      );
  }
}

/**
 * Throws a TypeError when `fn` destructures a field its context will not have: a misspelt or
 * undeclared resource is found at registration, not in the middle of a rollout. Functions that
 * take the context whole (`(ctx) => …`) are not checked here; TypeScript checks them.
 */
export function checkDestructuredContext(
  agent: string,
  fn: (...args: never[]) => unknown,
  fields: readonly string[],
  resources: ResourceSpecs,
): void {
  const keys = destructuredKeys(fn);
  if (!keys) return;
  const known = new Set([...fields, ...Object.keys(resources)]);
  const unknown = keys.filter((key) => !known.has(key));
  if (unknown.length === 0) return;
  const declared = Object.keys(resources);
  throw new TypeError(
    `agent "${agent}" asks its context for ${unknown.map((key) => `"${key}"`).join(", ")}, which ${unknown.length === 1 ? "is" : "are"} neither a context field (${fields.join(", ")}) nor a declared resource (${declared.length ? declared.join(", ") : "none declared"}); declare it in resources, e.g. resources: { ${unknown[0]}: promptTemplate("…") }`,
  );
}
