/** @module A safe arithmetic evaluator (no eval): integers and decimals, + - * / and parentheses. */

/** Thrown for anything that is not a well-formed arithmetic expression. */
export class ArithmeticError extends Error {
  override name = "ArithmeticError";
}

const MAX_LENGTH = 500;
const MAX_DEPTH = 50;

/**
 * Evaluates `expression` by recursive descent over a tiny grammar:
 * expr = term (("+"|"-") term)*; term = unary (("*"|"/") unary)*; unary = "-" unary | atom;
 * atom = number | "(" expr ")". Division by zero and non-finite results are errors.
 */
export function evaluateArithmetic(expression: string): number {
  if (expression.length > MAX_LENGTH)
    throw new ArithmeticError(`expression longer than ${MAX_LENGTH} characters`);
  const tokens = expression.match(/\d+(?:\.\d+)?|[-+*/()]|\S/g) ?? [];
  let position = 0;
  let depth = 0;
  const peek = () => tokens[position];
  const take = () => tokens[position++];

  function expr(): number {
    let value = term();
    while (peek() === "+" || peek() === "-")
      value = take() === "+" ? value + term() : value - term();
    return value;
  }
  function term(): number {
    let value = unary();
    while (peek() === "*" || peek() === "/") {
      if (take() === "*") value *= unary();
      else {
        const divisor = unary();
        if (divisor === 0) throw new ArithmeticError("division by zero");
        value /= divisor;
      }
    }
    return value;
  }
  function unary(): number {
    if (peek() === "-") {
      take();
      return -unary();
    }
    return atom();
  }
  function atom(): number {
    const token = take();
    if (token === undefined) throw new ArithmeticError("unexpected end of expression");
    if (token === "(") {
      if (++depth > MAX_DEPTH) throw new ArithmeticError("parentheses nested too deeply");
      const value = expr();
      if (take() !== ")") throw new ArithmeticError("missing )");
      depth--;
      return value;
    }
    if (/^\d/.test(token)) return Number(token);
    throw new ArithmeticError(`unexpected "${token}"`);
  }

  if (tokens.length === 0) throw new ArithmeticError("empty expression");
  const value = expr();
  if (position < tokens.length) throw new ArithmeticError(`unexpected "${tokens[position]}"`);
  if (!Number.isFinite(value)) throw new ArithmeticError("result is not finite");
  return value;
}

/** Formats a result the way people write it: integers plainly, others to at most 6 decimals. */
export function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Number(value.toFixed(6)));
}
