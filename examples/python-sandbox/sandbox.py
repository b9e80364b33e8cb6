"""The sandbox: evaluates one arithmetic expression read from stdin and prints the result.

It runs as its own process (``python3 -I sandbox.py``), a stand-in for a container or a VM: a
crash, a hang or a hostile input stays in it. Only numbers and + - * / // % ** ( ) are accepted.
"""
import ast
import operator
import os
import sys
import time

OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
             ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos}


def evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        if isinstance(node.op, ast.Pow) and abs(evaluate(node.right)) > 100:
            raise ValueError("exponent too large")
        return OPERATORS[type(node.op)](evaluate(node.left), evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in OPERATORS:
        return OPERATORS[type(node.op)](evaluate(node.operand))
    raise ValueError(f"unsupported expression element {type(node).__name__}")


def main() -> int:
    # A slow sandbox (container start, a test suite) is simulated with EDGE_ROLLOUT_SANDBOX_DELAY_S.
    time.sleep(float(os.environ.get("EDGE_ROLLOUT_SANDBOX_DELAY_S", "0")))
    expression = sys.stdin.read().strip()
    try:
        value = evaluate(ast.parse(expression, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError) as error:
        print(f"error: {error}")
        return 1
    print(int(value) if float(value).is_integer() else round(value, 6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
