/**
 * @module Reaching Durable Objects: the directory every route, consumer and object reaches another
 * object through, and the table a class's RPC methods are installed from. Worker code only: the
 * directory is typed by the platform's bindings.
 */
export { installSurface } from "./install-surface";
export { objects, type AdmissionShardRpc, type ObjectDirectory } from "./object-directory";
