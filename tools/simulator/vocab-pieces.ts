/**
 * @module The simulator's fixed list of multi-character vocabulary pieces.
 *
 * Order matters: a piece's id is its position here plus the first piece id, so appending is
 * safe and reordering renumbers every token. Duplicates and one-byte entries are dropped when
 * the vocabulary is built.
 */

const WORDS = [
  "the", "be", "to", "of", "and", "in", "that", "have", "it", "for", "not", "on", "with", "he",
  "as", "you", "do", "at", "this", "but", "his", "by", "from", "they", "we", "say", "her", "she",
  "or", "an", "will", "my", "one", "all", "would", "there", "their", "what", "so", "up", "out",
  "if", "about", "who", "get", "which", "go", "me", "when", "make", "can", "like", "time", "no",
  "just", "him", "know", "take", "people", "into", "year", "your", "good", "some", "could",
  "them", "see", "other", "than", "then", "now", "look", "only", "come", "its", "over", "think",
  "also", "back", "after", "use", "two", "how", "our", "work", "first", "well", "way", "even",
  "new", "want", "because", "any", "these", "give", "day", "most", "us", "is", "are", "was",
  "were", "has", "had", "been", "result", "answer", "calculate", "calculator", "expression",
  "tool", "tools", "user", "assistant", "system", "function", "functions", "name", "arguments",
  "compute", "step", "let", "number", "value", "sum", "product", "equals", "therefore", "final",
  "need", "should", "returned", "evaluate", "may", "call", "more", "provided", "signatures",
  "within", "tags", "object", "query", "assist", "return", "json", "type", "properties",
  "required", "string", "description", "parameters", "integer", "math", "problem", "question",
  "solve", "reasoning", "thinking", "okay", "here", "each", "XML",
];

const CAPITALIZED = [
  "The", "Let", "So", "What", "You", "I", "It", "This", "We", "Tools", "Okay", "For", "If",
  "Answer", "Result", "Step", "Here", "Therefore", "Now", "First", "Then", "Use",
];

const SYMBOLS = [
  "\n\n", "\n\n\n", ". ", ", ", "? ", "! ", ": ", "; ", "  ", "    ", "...", "--", "->", "=>",
  "==", "!=", "<=", ">=", "**", "//", "\": \"", "\", \"", "{\"", "\"}", "\":", "\",", "\": ",
  "}}", "{{", "]}", "[{", "},", "}\n", "\n}", "{\n", " {", " }", "()", "))", "((", " (", ") ",
  " =", " +", " -", " *", " /", " = ", " + ", " - ", " * ", " / ", "\"name\"", "\"arguments\"",
  "\"expression\"", "\"type\"", "\"function\"", "\"description\"", "\"parameters\"",
  "\"properties\"", "\"required\"", "\"string\"", "\"object\"", "\"number\"", "\"integer\"",
  "boxed", "\\boxed{", "\\boxed", "\\(", "\\)", "\\[", "\\]", "# ", "## ", "### ", "<tools>",
  "</tools>", "http", "://", "true", "false", "null",
];

function digitPairs(): string[] {
  const pairs: string[] = [];
  for (let i = 0; i < 100; i++) pairs.push(String(i).padStart(2, "0"));
  return pairs;
}

/** Every multi-character piece, in id order (before de-duplication). */
export const VOCAB_PIECES: readonly string[] = [
  ...WORDS,
  ...WORDS.map((word) => ` ${word}`),
  ...CAPITALIZED,
  ...CAPITALIZED.map((word) => ` ${word}`),
  ...digitPairs(),
  ...digitPairs().map((pair) => ` ${pair}`),
  ...SYMBOLS,
];
