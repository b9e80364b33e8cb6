/** @module The RPC surface of a Durable Object class, derived from the class so a stub's type can never drift from it (the Worker's stub helpers and objects that call other objects use it). */
/**
 * What a stub of Durable Object class `T` offers: every public method the class adds (the
 * runtime's handlers `fetch`, `alarm`, `webSocket*` of the global `DurableObject` left out), each returning a promise of what the method returns.
 * Deliberately shallow: `DurableObjectStub<T>` maps every return type through the serializable
 * types, which is too deep for the compiler on view-sized return types.
 */
export type RpcSurface<T> = {
  [K in Exclude<keyof T, keyof DurableObject>]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};
