/**
 * @module One way to give a Durable Object class its RPC methods: a table that names, for each
 * method of its interface, the call that serves it (a concern object beside the class), installed
 * on the class's prototype as a method that counts the request by name and makes that call.
 */
import type { RequestCounter } from "../request-counter";

/**
 * For each method of `Api`, the call that serves it on an object `self`: it takes the method's
 * arguments after `self` and returns what the method returns. A method of `Api` left out, or a
 * name `Api` lacks, does not compile.
 */
export type SurfaceTable<Self, Api> = {
  readonly [K in keyof Api]: Api[K] extends (...args: infer A) => infer R
    ? (self: Self, ...args: A) => R
    : never;
};

/**
 * Installs each method of `table` on `target.prototype`: counts one request to its name on
 * `requests(this)`, then makes its call. Installed as a class method is (on the prototype, not
 * enumerable) because workerd's RPC reaches only methods of the prototype; TypeScript learns of
 * them from an interface merged with the class (`interface C extends Omit<Api, …> {}`), and the
 * class still `implements` its whole interface, so the methods it writes out stay checked too.
 * Throws if the class already has a method of that name (it would be overwritten).
 *
 * @example
 * static {
 *   installSurface<PolicyStore, Installed>(PolicyStore, (s) => s.#requests, {
 *     fence: (s) => s.#core.fence(),
 *   });
 * }
 */
export function installSurface<Self, Api>(
  target: abstract new (...args: never[]) => Self,
  requests: (self: Self) => RequestCounter,
  table: SurfaceTable<Self, Api>,
): void {
  const prototype = target.prototype as object;
  for (const [name, call] of Object.entries(table) as Array<
    [string, (self: Self, ...args: unknown[]) => unknown]
  >) {
    if (Object.hasOwn(prototype, name))
      throw new Error(`installSurface: ${target.name} already defines ${name}`);
    // Named after its RPC method, so a stack trace names the method, not an anonymous forwarder.
    const method = {
      [name](this: Self, ...args: unknown[]): unknown {
        requests(this).count(name);
        return call(this, ...args);
      },
    }[name];
    Object.defineProperty(prototype, name, {
      value: method,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }
}
