/**
 * @module What the Worker's routes and classes use of the files at the root of src/runtime/: what
 * several objects share (counting requests and SQL, bounded waits and fan-out, the objects' names
 * and shards) and the gateway built from the bindings. Each folder of the runtime has its own door
 * (`./session`, `./feed`, …); no file of the runtime imports this one.
 */
export { withinDeadline } from "./deadline";
export { eachLimited } from "./each-limited";
export { countChatTokensFor, gatewayFor } from "./gateway-deps";
export { claimShardVisitOrder } from "./object-names";
export { RequestCounter, type RequestCounts } from "./request-counter";
export { CountingSql, type SqlCounts } from "./sql-counter";
