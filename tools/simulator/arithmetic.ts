/**
 * @module Integer arithmetic for the scripted answers: find an expression in a prompt,
 * evaluate it with a small recursive-descent parser (never eval), and print numbers the way
 * a math grader expects.
 */

type Token = { kind: "num"; value: number } | { kind: "op"; value: string };

function lex(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === " ") {
      i++;
    } else if (ch >= "0" && ch <= "9") {
      let j = i;
      while (j < text.length && (text[j] as string) >= "0" && (text[j] as string) <= "9") j++;
      tokens.push({ kind: "num", value: Number(text.slice(i, j)) });
      i = j;
    } else if ("+-*/()".includes(ch)) {
      tokens.push({ kind: "op", value: ch });
      i++;
    } else {
      return undefined;
    }
  }
  return tokens;
}

/** Parses `expr := term (("+"|"-") term)*`, `term := factor (("*"|"/") factor)*`, `factor := "-"? (num | "(" expr ")")`. */
class Parser {
  #pos = 0;
  readonly #tokens: Token[];

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  parse(): number | undefined {
    const value = this.#expr();
    return value !== undefined && this.#pos === this.#tokens.length ? value : undefined;
  }

  #peekOp(): string | undefined {
    const token = this.#tokens[this.#pos];
    return token?.kind === "op" ? token.value : undefined;
  }

  #expr(): number | undefined {
    let left = this.#term();
    while (left !== undefined && (this.#peekOp() === "+" || this.#peekOp() === "-")) {
      const op = this.#peekOp();
      this.#pos++;
      const right = this.#term();
      if (right === undefined) return undefined;
      left = op === "+" ? left + right : left - right;
    }
    return left;
  }

  #term(): number | undefined {
    let left = this.#factor();
    while (left !== undefined && (this.#peekOp() === "*" || this.#peekOp() === "/")) {
      const op = this.#peekOp();
      this.#pos++;
      const right = this.#factor();
      if (right === undefined) return undefined;
      if (op === "/" && right === 0) return undefined;
      left = op === "*" ? left * right : left / right;
    }
    return left;
  }

  #factor(): number | undefined {
    const token = this.#tokens[this.#pos];
    if (token === undefined) return undefined;
    if (token.kind === "num") {
      this.#pos++;
      return token.value;
    }
    if (token.value === "-") {
      this.#pos++;
      const inner = this.#factor();
      return inner === undefined ? undefined : -inner;
    }
    if (token.value === "(") {
      this.#pos++;
      const inner = this.#expr();
      if (inner === undefined || this.#peekOp() !== ")") return undefined;
      this.#pos++;
      return inner;
    }
    return undefined;
  }
}

/** Value of an expression of integers, `+ - * /` and parentheses; undefined if it does not parse or divides by zero. */
export function evaluateExpression(expression: string): number | undefined {
  const tokens = lex(expression);
  if (!tokens || tokens.length === 0) return undefined;
  const value = new Parser(tokens).parse();
  return value !== undefined && Number.isFinite(value) ? value : undefined;
}

/**
 * The longest arithmetic expression in `text` that has at least one binary operator and
 * evaluates, e.g. `"What is 12 * (3 + 4)?"` → `"12 * (3 + 4)"`.
 */
export function findExpression(text: string): string | undefined {
  let best: string | undefined;
  for (const match of text.matchAll(/[\d(][\d\s+\-*/()]*[\d)]/g)) {
    const candidate = match[0].replace(/\s+/g, " ").trim();
    if (!/\d\s*\)*\s*[+\-*/]\s*\(*\s*-?\d/.test(candidate)) continue;
    if (evaluateExpression(candidate) === undefined) continue;
    if (best === undefined || candidate.length > best.length) best = candidate;
  }
  return best;
}

/** `7` → `"7"`, `2.5` → `"2.5"`, `1/3` → `"0.333333"`: integers exactly, others to six places. */
export function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toFixed(6)));
}
