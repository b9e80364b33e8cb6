/**
 * @module The code sandboxes `runCode` can be given, as the Worker and its sandbox host build them:
 * a fresh isolate on a Worker Loader binding (JavaScript and, on Pyodide, Python; Pyodide's files
 * from R2 in production), or a sandbox host reached over HTTP.
 */
export { createBucketPythonSandbox, type PyodideBucket } from "./bucket-python-sandbox";
export { createLoaderSandbox, SANDBOX_COMPATIBILITY_DATE } from "./loader-sandbox";
export { createPythonSandbox, type PythonSandbox } from "./python-sandbox";
export { createRemoteSandbox } from "./remote-sandbox";
