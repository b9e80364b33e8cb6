/**
 * @module The chat completions API's stream generated from one whole reply (what a streaming chat
 * client reads when its turn ran token-exactly). The routes import from here only.
 */
export { chatEventStream } from "./chat-event-stream";
