/** @module The RPC surface of a Durable Object, derived from the interface its class implements (or the class), so a stub's type can never drift from the object (src/runtime/objects/object-directory.ts types every stub with it). */
/**
 * What a stub of a Durable Object with methods `T` offers: every public method `T` declares (the
 * runtime's handlers `fetch`, `alarm`, `webSocket*` of the global `DurableObject` left out, should
 * `T` be a class), each returning a promise of what the method returns.
 * Deliberately shallow: `DurableObjectStub<T>` maps every return type through the serializable
 * types, which is too deep for the compiler on view-sized return types.
 */
export type RpcSurface<T> = {
  [K in Exclude<keyof T, keyof DurableObject>]: T[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};
