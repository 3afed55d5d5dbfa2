// Conversations and time through the client, beyond the shared vectors:
// episodes stored and stored again, history of a supersession chain, what was
// current when, date phrases read as time windows, neighbours. Against a real
// engram serve (and a scripted one for the retries).

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, test } from "node:test";

import { BadRequest, EngramClient, Forbidden, NotFound, UnknownField } from "../dist/index.js";
import { key, startServer } from "./helpers.mjs";

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

const chat = [
  { speaker: "user", text: "I moved to Lisbon last month", occurred_at: "2026-03-02T10:00:00Z" },
  { speaker: "assistant", text: "How do you like Lisbon so far?", occurred_at: "2026-03-02T10:00:05Z" },
  { speaker: "user", text: "The tram to work takes twenty minutes", occurred_at: "2026-03-02T10:01:00Z", metadata: { mood: "calm" } },
];

test("an episode stored, stored again, grown, listed in its order", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("c") });
  const first = await c.addEpisode({ episode: "ts-chat", messages: chat, tags: ["chat"] });
  assert.deepStrictEqual(first, { ids: ["ts-chat:1", "ts-chat:2", "ts-chat:3"], embedded: 3 });
  const again = await c.addEpisode({ episode: "ts-chat", messages: chat, tags: ["chat"] });
  assert.deepStrictEqual(again, { ids: first.ids, embedded: 0 });
  const more = await c.addEpisode({ episode: "ts-chat", first_seq: 4, messages: [{ speaker: "user", text: "Bye", occurred_at: "2026-03-02T10:02:00Z" }] });
  assert.deepStrictEqual(more.ids, ["ts-chat:4"]);
  const page = await c.listMemories({ episode: "ts-chat", order: "seq" });
  assert.deepStrictEqual(page.memories.map((m) => [m.id, m.seq, m.speaker]),
    [["ts-chat:1", 1, "user"], ["ts-chat:2", 2, "assistant"], ["ts-chat:3", 3, "user"], ["ts-chat:4", 4, "user"]]);
  const m = await c.get("ts-chat:3");
  assert.equal(m.episode, "ts-chat");
  assert.equal(m.type, "turn");
  assert.equal(m.occurred_at, "2026-03-02T10:01:00Z");
  assert.deepStrictEqual(m.metadata, { mood: "calm" });
  assert.deepStrictEqual((await c.listMemories({ episode: "ts-chat", order: "-seq", limit: 2 })).memories.map((x) => x.id),
    ["ts-chat:4", "ts-chat:3"]);
  await assert.rejects(c.addEpisode({ episode: "ts-chat ", messages: chat }), BadRequest);
  await assert.rejects(c.addEpisode({ episode: "ts-chat", messages: [{ text: "hi", role: "user" }] }), UnknownField);
  await assert.rejects(c.addEpisode({ episode: "ts-chat", scope: { team: "b" }, messages: [{ text: "hi" }] }), Forbidden);
  await assert.rejects(c.add({ text: "orphan", seq: 3 }), BadRequest);
  await c.deleteScope({ team: "c" });
});

test("history, as_of, include_superseded, current", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("c") });
  const b = new EngramClient({ url: server.url, apiKey: key("b") });
  await c.addMany([
    { id: "city-1", text: "Sam lives in Porto", type: "fact", occurred_at: "2025-01-10T00:00:00Z" },
    { id: "city-2", text: "Sam lives in Lisbon", type: "fact", supersedes: "city-1", occurred_at: "2025-06-01T00:00:00Z" },
  ]);
  await c.add({ id: "city-3", text: "Sam lives in Madrid", type: "fact", supersedes: "city-2", occurred_at: "2026-02-01T00:00:00Z" });
  await assert.rejects(c.add({ text: "Sam lives in Rome", supersedes: "city-9" }), BadRequest);
  const h = await c.history("city-3");
  assert.deepStrictEqual(h.versions.map((v) => [v.id, v.current, v.superseded_by, v.superseded_at, v.supersedes]), [
    ["city-1", false, "city-2", "2025-06-01T00:00:00Z", undefined],
    ["city-2", false, "city-3", "2026-02-01T00:00:00Z", "city-1"],
    ["city-3", true, undefined, undefined, "city-2"],
  ]);
  assert.deepStrictEqual((await c.history("city-1", { within: { team: "c" } })).versions.map((v) => v.id), ["city-1", "city-2", "city-3"]);
  await assert.rejects(b.history("city-2"), NotFound);

  const ids = (page) => page.memories.map((m) => m.id);
  assert.deepStrictEqual(ids(await c.listMemories({ current: true })), ["city-3"]);
  assert.deepStrictEqual(ids(await c.listMemories({ as_of: "2025-07-01" })), ["city-2"]);
  assert.deepStrictEqual(ids(await c.listMemories({ supersedes: "city-1" })), ["city-2"]);
  assert.deepStrictEqual(ids(await c.listMemories({ order: "occurred_at" })), ["city-1", "city-2", "city-3"]);

  const q = { query: "where does Sam live", mode: "bm25", no_record: true };
  assert.deepStrictEqual((await c.search(q)).results.map((r) => r.id), ["city-3"]);
  const then = await c.search({ ...q, as_of: "2025-07-01" });
  assert.deepStrictEqual(then.results.map((r) => [r.id, r.superseded_by]), [["city-2", "city-3"]]);
  const every = await c.search({ ...q, include_superseded: true });
  assert.deepStrictEqual(Object.fromEntries(every.results.map((r) => [r.id, r.superseded_by ?? null])),
    { "city-1": "city-2", "city-2": "city-3", "city-3": null });

  // A date phrase read against the given reference time boosts what occurred inside its window.
  const dated = await c.search({ ...q, query: "where did Sam live last week", type: "fact", include_superseded: true, now: "2026-02-05T12:00:00Z" });
  assert.deepStrictEqual(dated.time, [{ phrase: "last week", since: "2026-01-26T00:00:00Z", until: "2026-02-02T00:00:00Z", boost: 1.5 }]);
  assert.deepStrictEqual(dated.results.map((r) => [r.id, r.explain?.boosts.time]), [["city-3", 1.5], ["city-1", undefined], ["city-2", undefined]]);
  const undated = await c.search({ ...q, query: "where did Sam live last week", type: "fact", include_superseded: true, now: "2026-02-05T12:00:00Z", no_dates: true });
  assert.equal(undated.time, undefined);
  assert.ok(undated.results.every((r) => r.explain?.boosts.time === undefined));
  await c.deleteScope({ team: "c" });
});

test("neighbours in search, inject and brief", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("c") });
  await c.addEpisode({ episode: "ts-nb", messages: chat });
  const hit = await c.search({ query: "tram to work", mode: "bm25", episode: "ts-nb", neighbours: 2, limit: 1, no_record: true });
  assert.deepStrictEqual(hit.results[0].neighbours, [
    { id: "ts-nb:1", offset: -2, seq: 1, speaker: "user", text: "I moved to Lisbon last month", occurred_at: "2026-03-02T10:00:00Z" },
    { id: "ts-nb:2", offset: -1, seq: 2, speaker: "assistant", text: "How do you like Lisbon so far?", occurred_at: "2026-03-02T10:00:05Z" },
  ]);
  const plain = await c.search({ query: "tram to work", mode: "bm25", episode: "ts-nb", limit: 1, no_record: true });
  assert.equal(plain.results[0].neighbours, undefined);
  await assert.rejects(c.search({ query: "tram", neighbours: 21 }), BadRequest);
  const inj = await c.inject({ prompt: "tram to work", episode: "ts-nb", limit: 1, min_relevance: 0.1, no_record: true });
  assert.deepStrictEqual(inj.results[0].neighbours?.map((n) => n.id), ["ts-nb:2"]);
  const none = await c.inject({ prompt: "tram to work", episode: "ts-nb", limit: 1, min_relevance: 0.1, neighbours: -1, no_record: true });
  assert.equal(none.results[0].neighbours, undefined);
  const brief = await c.brief({ episode: "ts-nb", neighbours: 1 });
  assert.deepStrictEqual(Object.fromEntries(brief.items.map((i) => [i.id, i.neighbours?.map((n) => n.offset)])),
    { "ts-nb:1": [1], "ts-nb:2": [-1, 1], "ts-nb:3": [-1] });
  await assert.rejects(c.brief({ neighbours: 21 }), BadRequest);
  const moved = await c.update("ts-nb:3", { speaker: "planner", occurred_at: "2026-03-02T11:00:00Z" });
  assert.deepStrictEqual([moved.speaker, moved.occurred_at, moved.seq], ["planner", "2026-03-02T11:00:00Z", 3]);
  await c.deleteScope({ team: "c" });
});

test("history and addEpisode are retried; the history path is escaped", async () => {
  const seen = [];
  let n = 0;
  const s = createServer((req, res) => {
    seen.push([req.method, req.url]);
    req.resume();
    req.on("end", () => {
      n++;
      const [status, body] = n % 2 === 1
        ? [503, { error: { code: "unavailable", message: "not ready" } }]
        : [200, { ids: ["e:1"], embedded: 1, versions: [] }];
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  try {
    const c = new EngramClient({ url: `http://127.0.0.1:${s.address().port}`, apiKey: "k".repeat(20), backoffMs: 1 });
    assert.deepStrictEqual(await c.history("a b/c", { within: "user=u1" }), { ids: ["e:1"], embedded: 1, versions: [] });
    await c.addEpisode({ episode: "e", messages: [{ text: "x" }] });
    assert.deepStrictEqual(seen, [
      ["GET", "/v1/memories/a%20b%2Fc/history?scope=user%3Du1"], ["GET", "/v1/memories/a%20b%2Fc/history?scope=user%3Du1"],
      ["POST", "/v1/episodes"], ["POST", "/v1/episodes"],
    ]);
  } finally {
    await new Promise((r) => s.close(r));
  }
});
