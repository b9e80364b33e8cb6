/**
 * @module The js-coder demo's tasks: each a function to write, the reference solution the scripted
 * model writes when its draw succeeds, and the cases the dataset's unit tests check. One table, so
 * the fixture dataset (test/fixtures/datasets/make-js-coder.ts) and the simulator cannot disagree.
 */

/** One coding task. `solution` defines (does not export) a function named `name`. */
export interface CodingTask {
  name: string;
  /** What the function must do, as the prompt states it. */
  description: string;
  solution: string;
  /** Arguments and the expected result of each unit test. */
  cases: Array<{ args: unknown[]; expected: unknown }>;
}

const task = (
  name: string,
  description: string,
  solution: string,
  cases: Array<[unknown[], unknown]>,
): CodingTask => ({
  name,
  description,
  solution,
  cases: cases.map(([args, expected]) => ({ args, expected })),
});

/** The 32 tasks, in dataset order. */
export const CODING_TASKS: readonly CodingTask[] = [
  task("add", "returns the sum of two numbers a and b", "function add(a, b) { return a + b; }", [
    [[2, 3], 5],
    [[-1, 1], 0],
    [[0, 0], 0],
    [[10, 15], 25],
  ]),
  task(
    "maxOf",
    "returns the largest number in a non-empty array",
    "function maxOf(xs) { return Math.max(...xs); }",
    [
      [[[1, 5, 3]], 5],
      [[[-4, -2]], -2],
      [[[7]], 7],
      [[[0, 10, 9]], 10],
    ],
  ),
  task(
    "reverseString",
    "returns the string s reversed",
    "function reverseString(s) { return [...s].reverse().join(''); }",
    [
      [["abc"], "cba"],
      [[""], ""],
      [["racecar"], "racecar"],
      [["ab"], "ba"],
    ],
  ),
  task(
    "isPalindrome",
    "returns true when the string s reads the same backwards",
    "function isPalindrome(s) { return s === [...s].reverse().join(''); }",
    [
      [["level"], true],
      [["abc"], false],
      [[""], true],
      [["abba"], true],
    ],
  ),
  task(
    "factorial",
    "returns n! for a non-negative integer n",
    "function factorial(n) { return n <= 1 ? 1 : n * factorial(n - 1); }",
    [
      [[0], 1],
      [[1], 1],
      [[5], 120],
      [[7], 5040],
    ],
  ),
  task(
    "fibonacci",
    "returns the n-th Fibonacci number (fibonacci(0) = 0, fibonacci(1) = 1)",
    "function fibonacci(n) { let a = 0, b = 1; for (let i = 0; i < n; i++) [a, b] = [b, a + b]; return a; }",
    [
      [[0], 0],
      [[1], 1],
      [[10], 55],
      [[20], 6765],
    ],
  ),
  task(
    "countVowels",
    "returns how many vowels (a, e, i, o, u, any case) the string s contains",
    "function countVowels(s) { return (s.match(/[aeiou]/gi) || []).length; }",
    [
      [["hello"], 2],
      [["xyz"], 0],
      [["AEIOU"], 5],
      [["Programming"], 3],
    ],
  ),
  task(
    "sumArray",
    "returns the sum of the numbers in an array (0 for an empty one)",
    "function sumArray(xs) { return xs.reduce((a, b) => a + b, 0); }",
    [
      [[[1, 2, 3]], 6],
      [[[]], 0],
      [[[-5, 5]], 0],
      [[[10]], 10],
    ],
  ),
  task(
    "isPrime",
    "returns true when the integer n is prime",
    "function isPrime(n) { if (n < 2) return false; for (let d = 2; d * d <= n; d++) if (n % d === 0) return false; return true; }",
    [
      [[2], true],
      [[1], false],
      [[17], true],
      [[21], false],
      [[97], true],
    ],
  ),
  task(
    "gcd",
    "returns the greatest common divisor of two positive integers",
    "function gcd(a, b) { return b === 0 ? a : gcd(b, a % b); }",
    [
      [[12, 18], 6],
      [[7, 13], 1],
      [[100, 75], 25],
      [[9, 9], 9],
    ],
  ),
  task(
    "capitalize",
    "returns s with its first character in upper case",
    "function capitalize(s) { return s.charAt(0).toUpperCase() + s.slice(1); }",
    [
      [["hello"], "Hello"],
      [[""], ""],
      [["a"], "A"],
      [["World"], "World"],
    ],
  ),
  task(
    "uniqueValues",
    "returns the distinct values of an array in first-seen order",
    "function uniqueValues(xs) { return [...new Set(xs)]; }",
    [
      [[[1, 2, 2, 3, 1]], [1, 2, 3]],
      [[[]], []],
      [[["a", "a"]], ["a"]],
      [[[3, 2, 1]], [3, 2, 1]],
    ],
  ),
  task(
    "flatten",
    "flattens an array of arrays one level deep",
    "function flatten(xss) { return xss.flat(); }",
    [
      [[[[1, 2], [3]]], [1, 2, 3]],
      [[[[]]], []],
      [[[[1], [2], [3, 4]]], [1, 2, 3, 4]],
      [[[]], []],
    ],
  ),
  task(
    "chunk",
    "splits an array into chunks of size n (the last may be shorter)",
    "function chunk(xs, n) { const out = []; for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n)); return out; }",
    [
      [
        [[1, 2, 3, 4, 5], 2],
        [[1, 2], [3, 4], [5]],
      ],
      [[[], 3], []],
      [[[1, 2, 3], 3], [[1, 2, 3]]],
      [[[1, 2], 5], [[1, 2]]],
    ],
  ),
  task(
    "range",
    "returns the integers from start (inclusive) to end (exclusive)",
    "function range(start, end) { const out = []; for (let i = start; i < end; i++) out.push(i); return out; }",
    [
      [
        [0, 3],
        [0, 1, 2],
      ],
      [[2, 2], []],
      [
        [-2, 1],
        [-2, -1, 0],
      ],
      [
        [5, 7],
        [5, 6],
      ],
    ],
  ),
  task(
    "countWords",
    "returns the number of whitespace-separated words in s",
    "function countWords(s) { return s.trim() === '' ? 0 : s.trim().split(/\\s+/).length; }",
    [
      [["hello world"], 2],
      [[""], 0],
      [["  a  b c "], 3],
      [["one"], 1],
    ],
  ),
  task(
    "titleCase",
    "capitalizes the first letter of every space-separated word",
    "function titleCase(s) { return s.split(' ').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' '); }",
    [
      [["hello world"], "Hello World"],
      [["a b"], "A B"],
      [[""], ""],
      [["js is fun"], "Js Is Fun"],
    ],
  ),
  task(
    "median",
    "returns the median of a non-empty array of numbers",
    "function median(xs) { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; }",
    [
      [[[3, 1, 2]], 2],
      [[[4, 1, 3, 2]], 2.5],
      [[[5]], 5],
      [[[1, 1, 9]], 1],
    ],
  ),
  task(
    "digitSum",
    "returns the sum of the decimal digits of a non-negative integer",
    "function digitSum(n) { return String(n).split('').reduce((a, d) => a + Number(d), 0); }",
    [
      [[123], 6],
      [[0], 0],
      [[9999], 36],
      [[405], 9],
    ],
  ),
  task(
    "isAnagram",
    "returns true when strings a and b are anagrams of each other",
    "function isAnagram(a, b) { const k = (s) => [...s].sort().join(''); return k(a) === k(b); }",
    [
      [["listen", "silent"], true],
      [["abc", "abd"], false],
      [["", ""], true],
      [["aab", "aba"], true],
    ],
  ),
  task(
    "clamp",
    "returns x limited to the range [lo, hi]",
    "function clamp(x, lo, hi) { return Math.min(hi, Math.max(lo, x)); }",
    [
      [[5, 0, 10], 5],
      [[-3, 0, 10], 0],
      [[42, 0, 10], 10],
      [[10, 0, 10], 10],
    ],
  ),
  task(
    "fizzBuzz",
    "returns 'Fizz' for multiples of 3, 'Buzz' for 5, 'FizzBuzz' for both, else the number as a string",
    "function fizzBuzz(n) { return n % 15 === 0 ? 'FizzBuzz' : n % 3 === 0 ? 'Fizz' : n % 5 === 0 ? 'Buzz' : String(n); }",
    [
      [[3], "Fizz"],
      [[10], "Buzz"],
      [[30], "FizzBuzz"],
      [[7], "7"],
    ],
  ),
  task(
    "camelCase",
    "turns a kebab-case string into camelCase",
    "function camelCase(s) { return s.replace(/-([a-z])/g, (_, c) => c.toUpperCase()); }",
    [
      [["foo-bar"], "fooBar"],
      [["a-b-c"], "aBC"],
      [["plain"], "plain"],
      [["edge-rollout-demo"], "edgeRolloutDemo"],
    ],
  ),
  task(
    "binaryToDecimal",
    "parses a string of 0s and 1s as a binary number",
    "function binaryToDecimal(s) { return parseInt(s, 2); }",
    [
      [["101"], 5],
      [["0"], 0],
      [["11111111"], 255],
      [["1000"], 8],
    ],
  ),
  task(
    "power",
    "returns base raised to a non-negative integer exponent",
    "function power(base, exp) { let r = 1; for (let i = 0; i < exp; i++) r *= base; return r; }",
    [
      [[2, 10], 1024],
      [[5, 0], 1],
      [[3, 3], 27],
      [[-2, 3], -8],
    ],
  ),
  task(
    "zip",
    "pairs the elements of two arrays up to the shorter length",
    "function zip(a, b) { return a.slice(0, Math.min(a.length, b.length)).map((x, i) => [x, b[i]]); }",
    [
      [
        [
          [1, 2],
          ["a", "b"],
        ],
        [
          [1, "a"],
          [2, "b"],
        ],
      ],
      [[[1], []], []],
      [
        [
          [1, 2, 3],
          [4, 5],
        ],
        [
          [1, 4],
          [2, 5],
        ],
      ],
      [[[], []], []],
    ],
  ),
  task(
    "compact",
    "removes falsy values from an array",
    "function compact(xs) { return xs.filter(Boolean); }",
    [
      [[[0, 1, false, 2, "", 3]], [1, 2, 3]],
      [[[]], []],
      [[[null, "a"]], ["a"]],
      [[[1, 2]], [1, 2]],
    ],
  ),
  task(
    "repeatString",
    "returns s repeated n times",
    "function repeatString(s, n) { return s.repeat(n); }",
    [
      [["ab", 3], "ababab"],
      [["x", 0], ""],
      [["", 5], ""],
      [["hi", 1], "hi"],
    ],
  ),
  task(
    "average",
    "returns the arithmetic mean of a non-empty array of numbers",
    "function average(xs) { return xs.reduce((a, b) => a + b, 0) / xs.length; }",
    [
      [[[1, 2, 3]], 2],
      [[[10]], 10],
      [[[1, 2]], 1.5],
      [[[-1, 1]], 0],
    ],
  ),
  task(
    "removeDuplicatesChars",
    "removes repeated characters from s, keeping first occurrences",
    "function removeDuplicatesChars(s) { return [...new Set(s)].join(''); }",
    [
      [["banana"], "ban"],
      [[""], ""],
      [["abc"], "abc"],
      [["aaaa"], "a"],
    ],
  ),
  task(
    "countOccurrences",
    "returns how many times x occurs in the array",
    "function countOccurrences(xs, x) { return xs.filter((y) => y === x).length; }",
    [
      [[[1, 2, 1, 1], 1], 3],
      [[[], 1], 0],
      [[["a", "b"], "c"], 0],
      [[[2, 2], 2], 2],
    ],
  ),
  task(
    "sortNumbers",
    "returns a new array with the numbers sorted ascending",
    "function sortNumbers(xs) { return [...xs].sort((a, b) => a - b); }",
    [
      [[[3, 1, 2]], [1, 2, 3]],
      [[[]], []],
      [[[10, 9, 100]], [9, 10, 100]],
      [[[-1, -5, 0]], [-5, -1, 0]],
    ],
  ),
];

/** The user prompt of `task`: the simulator finds the function's name in it again. */
export function codingPrompt(codingTask: CodingTask): string {
  return `Write a JavaScript function \`${codingTask.name}\` that ${codingTask.description}. Export it as a named export and answer with one \`\`\`js code block.`;
}

/** The unit-test module (`reward_model.ground_truth`) of `task`, run by `runCode` against the answer. */
export function codingTests(codingTask: CodingTask): string {
  const lines = codingTask.cases.map(
    ({ args, expected }) =>
      `test(${JSON.stringify(`${codingTask.name}(${args.map((a) => JSON.stringify(a)).join(", ")})`)}, () => assert.deepEqual(${codingTask.name}(...${JSON.stringify(args)}), ${JSON.stringify(expected)}));`,
  );
  return [`import { ${codingTask.name} } from "./solution.js";`, ...lines].join("\n");
}

/** Finds the task a prompt asks for (by the function name in backticks), if any. */
export function findCodingTask(prompt: string): CodingTask | undefined {
  const name = /Write a JavaScript function `(\w+)`/.exec(prompt)?.[1];
  return name === undefined ? undefined : CODING_TASKS.find((candidate) => candidate.name === name);
}
