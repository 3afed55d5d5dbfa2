// What a mem0 user reaches for, against a real engram serve: add's answer
// passed on to the by-id calls, adding chat messages ({role, content}),
// history, reset; and bad arguments refused with the parameter named.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { BadRequest, EngramClient, Forbidden, NotFound, idOf } from "../dist/index.js";
import { key, startServer } from "./helpers.mjs";

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

/** Asserts that fn throws a TypeError whose message starts with the parameter's name. */
async function refuses(fn, param) {
  await assert.rejects(async () => fn(), (e) => {
    assert.ok(e instanceof TypeError, `${e} is not a TypeError`);
    assert.ok(e.message.startsWith(param + ":"), `message ${JSON.stringify(e.message)} does not start with ${param}:`);
    return true;
  });
}

test("add's answer is what get, update, favorite, touch, history and delete take", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("c") });
  const added = await c.add({ text: "The staging database is on port 5433", tags: ["ops"] });
  assert.equal(typeof added.id, "string");
  assert.deepStrictEqual(added.ids, [added.id]);
  assert.equal((await c.get(added)).text, "The staging database is on port 5433");
  assert.equal((await c.update(added, { tags: ["ops", "db"] })).id, added.id);
  assert.equal((await c.favorite(added)).favorite, true);
  assert.deepStrictEqual(await c.touch(added), { touched: 1 });
  // A Memory and a search Result name themselves too.
  const m = await c.get(added.id);
  assert.equal((await c.get(m)).id, added.id);
  const r = (await c.search({ query: "staging database port", mode: "bm25", no_record: true })).results[0];
  assert.equal((await c.get(r)).id, added.id);
  // An exact repeat is merged: its answer names the memory that holds it.
  const again = await c.add({ text: "The staging database is on port 5433", tags: ["ops"] });
  assert.equal(again.id, added.id);
  // history takes it, and supersedes takes an answer too.
  const moved = await c.add({ text: "The staging database moved to port 5434", supersedes: added });
  assert.deepStrictEqual((await c.history(moved)).versions.map((v) => [v.id, v.current]), [[added.id, false], [moved.id, true]]);
  assert.deepStrictEqual(await c.delete(moved), { deleted: 1 });
  assert.deepStrictEqual(await c.delete(added), { deleted: 1 });
  await assert.rejects(c.get(added), NotFound);

  const many = await c.addMany([{ text: "one" }, { text: "two" }]);
  await refuses(() => c.get(many), "id");
  await assert.rejects(c.get(many), /AddResult of 2 memories names no single one; pass one of its ids/);
  assert.equal(idOf({ ids: [many.ids[1]] }), many.ids[1]);
  assert.equal((await c.update(many.ids[1], { supersedes: await c.get(many.ids[0]) })).supersedes, many.ids[0]);
  await refuses(() => c.update(many.ids[1], { supersedes: 5 }), "patch.supersedes");
  await refuses(() => c.update(many.ids[1], "text"), "patch");
  await refuses(() => c.addMany([{ text: "x" }, { text: "y", supersedes: [] }]), "memories[1].supersedes");
  await refuses(() => c.addMany([{ text: "x" }, "y"]), "memories[1]");
  for (const bad of [42, null, undefined, "", ["x"], {}, { ids: [] }, { id: 7 }]) await refuses(() => c.get(bad), "id");
  await assert.rejects(c.delete(3.5), /^TypeError: id: want a memory id \(string\), a Memory, a Result or what add\(\) answered, not number 3.5$/);
  await refuses(() => c.add([{ role: "user", content: "hi" }]), "memory");
  await assert.rejects(c.add([{ role: "user", content: "hi" }]), /addMessages/);
  await refuses(() => c.add("just text"), "memory");
  await refuses(() => c.add({ content: "hi" }), "memory.text");
  await refuses(() => c.add({ text: "x", supersedes: { ids: [] } }), "memory.supersedes");
  await refuses(() => c.addMany("nope"), "memories");
  await c.deleteScope({ team: "c" });
});

test("addMessages stores chat messages as an episode, again without repeats", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("c") });
  const chat = [
    { role: "user", content: "I'm allergic to peanuts", occurred_at: "2026-04-01T09:00:00Z" },
    { role: "assistant", content: "Noted: no peanuts in the recipes." },
  ];
  const res = await c.addMessages(chat, { scope: { user: "sam" }, tags: ["chat"] });
  assert.match(res.episode, /^chat-[0-9a-f]{12}$/);
  assert.deepStrictEqual(res.ids, [`${res.episode}:1`, `${res.episode}:2`]);
  const page = await c.listMemories({ episode: res.episode, order: "seq" });
  assert.deepStrictEqual(page.memories.map((m) => [m.seq, m.speaker, m.text, m.type, m.scope, m.tags]), [
    [1, "user", "I'm allergic to peanuts", "turn", { team: "c", user: "sam" }, ["chat"]],
    [2, "assistant", "Noted: no peanuts in the recipes.", "turn", { team: "c", user: "sam" }, ["chat"]],
  ]);
  assert.equal(page.memories[0].occurred_at, "2026-04-01T09:00:00Z");
  // The same conversation grown: only the new message is written.
  const grown = await c.addMessages([...chat, { role: "user", content: "And to shellfish" }], { episode: res.episode, scope: { user: "sam" }, tags: ["chat"] });
  assert.deepStrictEqual(grown, { ids: [...res.ids, `${res.episode}:3`], embedded: 1, episode: res.episode });
  // {speaker, text} as addEpisode takes them work too, and the answer's ids go on to get.
  const named = await c.addMessages([{ speaker: "user", text: "Call me Sam" }], { episode: "named-chat" });
  assert.deepStrictEqual(named.ids, ["named-chat:1"]);
  assert.equal((await c.get(named.ids[0])).speaker, "user");
  const found = await c.search({ query: "peanuts allergy", episode: res.episode, mode: "bm25", no_record: true });
  assert.equal(found.results[0].id, `${res.episode}:1`);

  await refuses(() => c.addMessages({ role: "user", content: "hi" }), "messages");
  await refuses(() => c.addMessages([]), "messages");
  await refuses(() => c.addMessages(["hi"]), "messages[0]");
  await refuses(() => c.addMessages([{ role: "user", content: "a" }, { role: "user", content: [{ type: "text", text: "b" }] }]), "messages[1].content");
  await refuses(() => c.addMessages([{ role: 1, content: "a" }]), "messages[0].role");
  await refuses(() => c.addMessages([{ role: "user" }]), "messages[0]");
  await refuses(() => c.addMessages([{ role: "user", content: "a", name: "sam" }]), "messages[0].name");
  await refuses(() => c.addMessages([{ role: "user", speaker: "user", content: "a" }]), "messages[0]");
  await refuses(() => c.addMessages([{ role: "user", content: "a" }], { episode: "" }), "options.episode");
  await assert.rejects(c.addMessages([{ role: "user", content: "a" }], { scope: { team: "b" } }), Forbidden);
  await c.deleteScope({ team: "c" });
});

test("reset forgets a scope, its episodes and versions, and nothing else", async () => {
  const c = new EngramClient({ url: server.url, apiKey: key("c") });
  await c.add({ text: "Ana likes tea", scope: { user: "ana" } });
  const old = await c.add({ text: "Ana lives in Faro", scope: { user: "ana" } });
  await c.add({ text: "Ana lives in Braga", scope: { user: "ana" }, supersedes: old });
  await c.addMessages([{ role: "user", content: "hello" }], { scope: { user: "ana" } });
  const bo = await c.add({ text: "Bo likes coffee", scope: { user: "bo" } });
  assert.deepStrictEqual(await c.reset({ user: "ana" }), { deleted: 4 });
  assert.deepStrictEqual(await c.reset("user=ana"), { deleted: 0 });
  assert.deepStrictEqual((await c.listMemories()).memories.map((m) => m.id), [bo.id]);
  await refuses(() => c.reset(""), "scope");
  await refuses(() => c.reset({}), "scope");
  await refuses(() => c.reset(["user=ana"]), "scope");
  await assert.rejects(c.reset({ team: "b" }), Forbidden);
  // Without a scope: every memory of the API key's scope, and nothing of another key's.
  const b = new EngramClient({ url: server.url, apiKey: key("b") });
  const theirs = await b.add({ text: "Team b keeps this" });
  await c.add({ text: "Cy likes rain", scope: { user: "cy" } });
  assert.deepStrictEqual(await c.reset(), { deleted: 2 });
  assert.deepStrictEqual((await c.listMemories()).memories, []);
  assert.deepStrictEqual(await c.reset(), { deleted: 0 });
  assert.equal((await b.get(theirs)).text, "Team b keeps this");
});

test("reset without a scope is refused by a server without keys, and deletes nothing", async () => {
  const open = await startServer({ keys: false });
  try {
    const c = new EngramClient({ url: open.url, apiKey: "" });
    const kept = await c.add({ text: "Everyone's memory", scope: { user: "ana" } });
    await assert.rejects(c.reset(), (e) => e instanceof BadRequest && /whole store/.test(e.message));
    assert.equal((await c.get(kept)).text, "Everyone's memory");
    assert.deepStrictEqual(await c.reset("user=ana"), { deleted: 1 });
  } finally {
    await open.stop();
  }
});

test("wrong arguments are refused before anything is sent, naming the parameter", async () => {
  const c = new EngramClient({ url: "http://127.0.0.1:9", apiKey: "" });
  await refuses(() => c.search("where"), "query");
  await refuses(() => c.inject("prompt"), "request");
  await refuses(() => c.brief("x"), "request");
  await refuses(() => c.addEpisode([]), "episode");
  await refuses(() => c.listMemories("user=u1"), "options");
  await refuses(() => c.listMemories({ scope: 5 }), "options.scope");
  await refuses(() => c.listMemories({ scope: { user: 5 } }), "options.scope.user");
  await refuses(() => c.deleteScope(5), "scope");
  await refuses(() => c.get("x", "user=u1"), "opts");
  await refuses(() => c.get("x", { within: 5 }), "opts.within");
  await refuses(() => c.touch(null), "id");
  await refuses(() => c.iterMemories(7).next(), "options");
});
