/** @module The RPC surface of a Durable Object, derived from the interface its class implements (or the class), so a stub's type can never drift from the object (src/runtime/objects/object-directory.ts types every stub with it). */
/**
 * The handlers the runtime itself calls on a Durable Object (the keys of the platform's
 * `DurableObject` interface), which a stub does not offer. Named here rather than taken from that
 * interface so this file needs no platform types (Node-side unit tests import the interfaces that
 * import it); test/integration/durable-objects/do-stub-types.check.ts asserts the two
 * agree.
 */
export type DurableObjectHandler =
  "fetch" | "connect" | "alarm" | "webSocketMessage" | "webSocketClose" | "webSocketError";

/**
 * What a stub of a Durable Object with methods `T` offers: every public method `T` declares (the
 * runtime's handlers left out, should `T` be a class), each returning a promise of what the
 * method returns.
 * Deliberately shallow: `DurableObjectStub<T>` maps every return type through the serializable
 * types, which is too deep for the compiler on view-sized return types.
 */
export type RpcSurface<T> = {
  [K in Exclude<keyof T, DurableObjectHandler>]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/**
 * The method names of `Api` at run time, from a record that names each once: a name left out, or
 * one `Api` lacks, does not compile. Each object's list stands beside its interface, and
 * test/integration/durable-objects/object-surfaces.integration.test.ts checks that its class has
 * every one.
 */
export function methodNames<Api>(names: Record<keyof Api, true>): Array<keyof Api & string> {
  return Object.keys(names) as Array<keyof Api & string>;
}
