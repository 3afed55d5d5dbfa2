// The client beyond the vectors: tenant isolation, configuration from the
// environment, streams and their trailer, retries, timeouts. Against a real
// engram serve, except where a server must misbehave on purpose (5xx, 429, a
// stall, a cut export): a small scripted node:http server on 127.0.0.1 plays it.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import {
  EngramClient, ExportIncomplete, Forbidden, NotFound, Timeout, Unauthorized, Unavailable, Unreachable,
} from "../dist/index.js";
import { key, startServer } from "./helpers.mjs";

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

async function collect(gen) {
  const out = [];
  for await (const x of gen) out.push(x);
  return out;
}

test("tenants never see each other, scores included", async () => {
  const u1 = new EngramClient({ url: server.url, apiKey: key("a1") });
  const b = new EngramClient({ url: server.url, apiKey: key("b") });
  const team = new EngramClient({ url: server.url, apiKey: key("a") });
  const q = { query: "rotation schedule for the pager", mode: "bm25", no_record: true };
  await b.add({ id: "shared-id", text: "The pager rotation schedule is on the wiki" });
  const before = await b.search(q);
  assert.deepStrictEqual(before.results.map((r) => r.id), ["shared-id"]);
  await u1.add({ id: "shared-id", text: "The pager rotation schedule lives in the ops channel" });
  await u1.addMany(Array.from({ length: 20 }, (_, i) => ({ text: `pager rotation schedule note ${i}` })));
  const afterWrites = await b.search(q);
  assert.deepStrictEqual(afterWrites.results.map((r) => [r.id, r.score, r.explain?.bm25?.score]),
    before.results.map((r) => [r.id, r.score, r.explain?.bm25?.score]));
  assert.equal((await b.get("shared-id")).text, "The pager rotation schedule is on the wiki");
  assert.equal((await u1.get("shared-id")).text, "The pager rotation schedule lives in the ops channel");
  assert.equal((await b.stats()).memories, 1);
  assert.deepStrictEqual((await collect(b.export())).map((m) => m.id), ["shared-id"]);
  const all = await collect(u1.iterMemories({ limit: 5 }));
  assert.equal(all.length, 21);
  assert.ok(all.every((m) => m.scope?.team === "a" && m.scope?.user === "u1"));
  await assert.rejects(u1.search({ query: "pager", scope: { team: "b" } }), Forbidden);
  await assert.rejects(u1.deleteScope("team=b"), Forbidden);
  await assert.rejects(b.delete(all[0].id === "shared-id" ? all[1].id : all[0].id), NotFound);
  assert.deepStrictEqual((await team.get("shared-id")).scope, { team: "a", user: "u1" });
  assert.equal((await team.deleteScope({ user: "u1" })).deleted, 21);
  assert.equal((await b.get("shared-id")).text, "The pager rotation schedule is on the wiki");
  await b.deleteScope({ team: "b" });
});

test("URL and key from the environment", async () => {
  const saved = { url: process.env.ENGRAM_URL, key: process.env.ENGRAM_API_KEY };
  try {
    process.env.ENGRAM_URL = server.url;
    process.env.ENGRAM_API_KEY = key("b");
    const c = new EngramClient();
    assert.equal(c.url, server.url);
    await c.add({ id: "env", text: "from the environment" });
    await assert.rejects(new EngramClient({ apiKey: key("a1") }).get("env"), NotFound);
    delete process.env.ENGRAM_API_KEY;
    const err = await new EngramClient().stats().catch((e) => e);
    assert.ok(err instanceof Unauthorized && err.status === 401 && err.code === "unauthorized");
    assert.throws(() => new EngramClient({ url: "127.0.0.1:7077" }), TypeError);
  } finally {
    for (const [k, v] of [["ENGRAM_URL", saved.url], ["ENGRAM_API_KEY", saved.key]]) {
      if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  }
});

test("export then import restores the memories exactly", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("a1") });
  await c.addMany(Array.from({ length: 50 }, (_, i) => ({ id: `r${i}`, text: `memory number ${i} ` + "word ".repeat(i), tags: ["t"] })));
  await c.favorite("r7");
  await c.touch("r8");
  const lines = await collect(c.exportLines());
  assert.equal(lines.length, 50);
  const first = await collect(c.export());
  const other = await startServer();
  try {
    const d = new EngramClient({ url: other.url, apiKey: key("a1") });
    assert.equal((await d.importJsonl(first)).ids?.length, 50);
    assert.deepStrictEqual(await collect(d.export()), first);
    assert.ok((await d.get("r7")).favorite);
    assert.equal((await d.get("r8")).uses, 1);
    await d.deleteScope("user=u1");
    assert.equal((await d.importJsonl(lines.join(""))).ids?.length, 50);
    await d.deleteScope("user=u1");
    async function* gen() { for (const l of lines) yield new TextEncoder().encode(l); }
    assert.equal((await d.importJsonl(gen())).ids?.length, 50);
  } finally {
    await other.stop();
  }
  await c.deleteScope("user=u1");
});

// ---- a scripted server ----

async function scripted(script) {
  const requests = [];
  const srv = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests.push([req.method, req.url]);
      const step = script.length > 1 ? script.shift() : script[0];
      if (typeof step === "function") return step(req, res);
      const [status, headers, body] = step;
      const data = typeof body === "string" ? body : JSON.stringify(body);
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(data);
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${srv.address().port}`,
    requests,
    script,
    close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(r); }),
  };
}

const STATS = { memories: 3, favorites: 0, types: { note: 3 }, embedded: {}, embedder: "static" };
const UNAVAILABLE = [503, {}, { error: { code: "unavailable", message: "not ready" } }];
const opts = (s, more = {}) => ({ url: s.url, apiKey: "k".repeat(20), backoffMs: 10, ...more });

test("idempotent calls are retried, then give up", async () => {
  const s = await scripted([UNAVAILABLE, [429, { "Retry-After": "0" }, ""], [200, {}, STATS]]);
  try {
    assert.equal((await new EngramClient(opts(s)).stats()).memories, 3);
    assert.equal(s.requests.length, 3);
    s.script.splice(0, s.script.length, UNAVAILABLE);
    s.requests.length = 0;
    const err = await new EngramClient(opts(s, { maxRetries: 2 })).get("x").catch((e) => e);
    assert.ok(err instanceof Unavailable && err.status === 503, String(err));
    assert.equal(s.requests.length, 3);
  } finally {
    await s.close();
  }
});

test("writes and recording searches are not retried", async () => {
  for (const call of [(c) => c.add({ text: "x" }), (c) => c.touch("x"), (c) => c.search({ query: "x" }), (c) => c.importJsonl([{ text: "x" }])]) {
    const s = await scripted([UNAVAILABLE]);
    try {
      await assert.rejects(call(new EngramClient(opts(s))), Unavailable);
      assert.equal(s.requests.length, 1);
    } finally {
      await s.close();
    }
  }
  const ok = { query: "x", strategy: "bm25", results: [], timings_ms: {} };
  const s = await scripted([[502, {}, "bad gateway"], [200, {}, ok]]);
  try {
    assert.equal((await new EngramClient(opts(s)).search({ query: "x", no_record: true })).strategy, "bm25");
    assert.equal(s.requests.length, 2);
  } finally {
    await s.close();
  }
});

test("an error without the API's body maps by status", async () => {
  const s = await scripted([[404, { "Content-Type": "text/html" }, "<html>nope</html>"]]);
  try {
    const err = await new EngramClient(opts(s, { maxRetries: 0 })).stats().catch((e) => e);
    assert.ok(err instanceof NotFound && err.status === 404);
  } finally {
    await s.close();
  }
});

test("timeout", async () => {
  const s = await scripted([(req, res) => { setTimeout(() => { if (!res.destroyed) res.end("{}"); }, 1500); }]);
  try {
    await assert.rejects(new EngramClient(opts(s, { timeoutMs: 200, maxRetries: 0 })).stats(), Timeout);
  } finally {
    await s.close();
  }
});

test("unreachable", async () => {
  const s = await scripted([[200, {}, {}]]);
  const url = s.url;
  await s.close();
  await assert.rejects(new EngramClient({ url, backoffMs: 10 }).stats(), Unreachable);
});

const LINES = [0, 1, 2].map((i) => JSON.stringify({ id: `e${i}`, text: "t", type: "note", created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z" }) + "\n");

function chunked(lines, trailer, cut = false) {
  return (req, res) => {
    res.writeHead(200, { "Content-Type": "application/x-ndjson", Trailer: "Engram-Export-Count" });
    for (const l of lines) res.write(l);
    if (cut) {
      setTimeout(() => res.socket.destroy(), 20);
      return;
    }
    if (trailer !== null) res.addTrailers({ "Engram-Export-Count": trailer });
    res.end();
  };
}

for (const [name, answer, ok] of [
  ["complete", chunked(LINES, "3"), true],
  ["no trailer", chunked(LINES, null), false],
  ["wrong count", chunked(LINES, "4"), false],
  ["cut", chunked(LINES.slice(0, 2), null, true), false],
  ["cut inside a line", chunked([LINES[0], LINES[1].slice(0, 5)], "2"), false],
]) {
  test(`export trailer: ${name}`, async () => {
    const s = await scripted([answer]);
    try {
      const c = new EngramClient(opts(s, { maxRetries: 0 }));
      if (ok) assert.deepStrictEqual((await collect(c.export())).map((m) => m.id), ["e0", "e1", "e2"]);
      else await assert.rejects(collect(c.export()), ExportIncomplete);
    } finally {
      await s.close();
    }
  });
}

test("export retries before the stream starts", async () => {
  const s = await scripted([UNAVAILABLE, chunked(LINES, "3")]);
  try {
    assert.equal((await collect(new EngramClient(opts(s)).export())).length, 3);
    assert.equal(s.requests.length, 2);
  } finally {
    await s.close();
  }
});

test("three tenants writing and searching at once each see only their own", async () => {
  await Promise.all(["a1", "a2", "b"].map(async (name) => {
    const c = new EngramClient({ url: server.url, apiKey: key(name) });
    await Promise.all(Array.from({ length: 30 }, (_, i) => c.add({ id: `z${i}`, text: `${name} says the shared word zebra number ${i}` })));
    const all = await Promise.all(Array.from({ length: 10 }, () => c.search({ query: "shared word zebra", mode: "bm25", limit: 50, no_record: true })));
    for (const r of all) {
      assert.equal(r.results.length, 30);
      assert.ok(r.results.every((x) => x.text.startsWith(name + " ")));
    }
    const mems = (await collect(c.export())).filter((m) => m.id.startsWith("z"));
    assert.equal(mems.length, 30);
    assert.ok(mems.every((m) => m.text.startsWith(name + " ")));
    for (let i = 0; i < 30; i++) await c.delete(`z${i}`);
  }));
});
