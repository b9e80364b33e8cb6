import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runExternalGroups } from "../../../bench/soak/soak-externals";
import { createSoakHttp, type HttpTally } from "../../../bench/soak/soak-http";

/** A loopback stand-in for the Worker: `onCreate` answers each create (by its count), the rest answer 200. */
async function fakeStack(onCreate: (n: number, rolloutId: string, res: ServerResponse) => void) {
  const creates: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (chunk: Buffer) => (raw += chunk.toString()));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/rollouts") {
        const id = (JSON.parse(raw) as { rollout_id: string }).rollout_id;
        creates.push(id);
        onCreate(creates.length, id, res);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, creates, close: () => new Promise<void>((done) => server.close(() => done())) };
}

const created = (url: string, id: string) =>
  JSON.stringify({
    rollout_id: id,
    llm: { base_url: `${url}/v1/rollouts/${id}/llm/v1`, api_key: "k" },
  });

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("the soak's external rollouts", () => {
  it("retries a create whose 2xx answer was cut before its body, instead of crashing the run", async () => {
    const stack = await fakeStack((n, id, res) => {
      // The first create's answer dies with the stack: a status line and half a body, then a reset.
      if (n === 1) {
        res.writeHead(202, { "content-type": "application/json", "content-length": "400" });
        res.write(created(stack.url, id).slice(0, 10), () => res.socket?.destroy());
        return;
      }
      res.writeHead(202, { "content-type": "application/json" }).end(created(stack.url, id));
    });
    close = stack.close;
    const tally: HttpTally = { fivexx: 0, fivexxBy: {}, unreachable: 0 };
    const result = await runExternalGroups(
      createSoakHttp(() => stack.url, tally),
      "t",
      1,
      1,
    );
    expect(result.failures).toEqual([]);
    expect(result.ids).toEqual([
      "soak-ext-t-0-0",
      "soak-ext-t-0-1",
      "soak-ext-t-0-2",
      "soak-ext-t-0-3",
    ]);
    // The cut create was sent again with the same rollout id (creates are idempotent by id).
    expect(stack.creates.filter((id) => id === "soak-ext-t-0-0")).toHaveLength(2);
  });

  it("records a create refused for good as a failure and still returns every id it meant to run", async () => {
    const stack = await fakeStack((_n, _id, res) => {
      res
        .writeHead(409, { "content-type": "application/problem+json" })
        .end(JSON.stringify({ title: "conflict" }));
    });
    close = stack.close;
    const tally: HttpTally = { fivexx: 0, fivexxBy: {}, unreachable: 0 };
    const result = await runExternalGroups(
      createSoakHttp(() => stack.url, tally),
      "u",
      1,
      2,
    );
    expect(result.ids.sort()).toEqual([
      "soak-ext-u-0-0",
      "soak-ext-u-0-1",
      "soak-ext-u-0-2",
      "soak-ext-u-0-3",
    ]);
    expect(result.failures.sort()).toEqual(
      ["soak-ext-u-0-0", "soak-ext-u-0-1", "soak-ext-u-0-2", "soak-ext-u-0-3"].map(
        (id) => `create ${id}: 409 {"title":"conflict"}`,
      ),
    );
    // A final 4xx is not retried.
    expect(stack.creates).toHaveLength(4);
  });
});
