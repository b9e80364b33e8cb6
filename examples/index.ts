/**
 * @module Registers every example agent by name when imported: `room-selector`, `search-workflow`,
 * `openai-agents-calculator`, `ai-sdk-calculator` and `guess-number`. The core Worker does not
 * import this (two examples need the optional `@openai/agents` and `ai` packages); `worker.ts`
 * beside it is the Worker with the examples, and the tests import each example they run.
 */
import "./room-selector/room-selector.agent";
import "./search-workflow/search-workflow.agent";
import "./openai-agents-calculator/openai-agents-calculator.agent";
import "./ai-sdk-calculator/ai-sdk-calculator.agent";
import "./stepwise-agent/guess-number.agent";
