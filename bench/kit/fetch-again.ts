/**
 * @module `fetch` for benches, again on a new connection when the one it used was already closed:
 * a kept-alive socket that workerd let go just as it was reused ("other side closed",
 * ECONNRESET), so the request never reached the Worker. Only for requests safe to repeat.
 */

/** The socket errors that mean the server closed the connection before answering. */
const CLOSED_SOCKET = new Set(["UND_ERR_SOCKET", "ECONNRESET"]);

/** `fetch(url, init)`, repeated at most twice when the connection was closed under it. */
export async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      if (attempt >= 3 || cause === undefined || !CLOSED_SOCKET.has(cause)) throw error;
    }
  }
}
