// The shared test vectors (sdk/testvectors/vectors.json) through the
// TypeScript client against a fresh engram serve.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { EngramClient, EngramError, errorClasses } from "../dist/index.js";
import { repo, startServer, vectors } from "./helpers.mjs";

/** The SDK call a case makes. */
function call(c, cs) {
  const q = { ...(cs.query ?? {}) };
  const body = cs.body;
  const by = q.scope !== undefined ? { within: q.scope } : undefined;
  switch (cs.op) {
    case "addMemories": return body.memories ? c.addMany(body.memories) : c.add(body);
    case "listMemories": return c.listMemories(q);
    case "deleteScope": return q.all === true && q.scope === undefined ? c.reset() : c.deleteScope(q.scope ?? "");
    case "getMemory": return c.get(cs.id, by);
    case "updateMemory": return c.update(cs.id, body, by);
    case "deleteMemory": return c.delete(cs.id, by);
    case "favoriteMemory": return c.favorite(cs.id, body?.favorite ?? true, by);
    case "touchMemory": return c.touch(cs.id, by);
    case "memoryHistory": return c.history(cs.id, by);
    case "addEpisode": return c.addEpisode(body);
    case "search": return c.search(body);
    case "inject": return c.inject(body);
    case "brief": return c.brief(body ?? {});
    case "import": return c.importJsonl(body, { skipInvalid: q.skip_invalid === true });
    case "export": return (async () => { const out = []; for await (const m of c.export()) out.push(m); return out; })();
    case "stats": return c.stats();
    case "healthz": return c.healthz();
    case "readyz": return c.readyz();
    case "openapi": return c.openapi();
    case "mcp": return c.mcp(body);
    case "raw": return c.request(cs.method, cs.path, { body: cs.raw_body, headers: cs.headers });
  }
  throw new Error(`case ${cs.name}: no SDK call for op ${cs.op}`);
}

function idsOf(op, res) {
  switch (op) {
    case "listMemories": return res.memories.map((m) => m.id);
    case "search": case "inject": return res.results.map((r) => r.id);
    case "brief": return res.items.map((i) => i.id);
    case "memoryHistory": return res.versions.map((v) => v.id);
    case "addMemories": case "addEpisode": case "import": return res.ids ?? [];
    case "export": return res.map((m) => m.id);
    default: return [res.id];
  }
}

/** Every field of want holds in got: objects field by field, a list of objects as as many objects
 * each matched field by field (as the Go and Python runners match), anything else equal. */
function subset(at, want, got) {
  for (const [k, w] of Object.entries(want)) {
    assert.ok(got !== null && typeof got === "object" && k in got, `field ${at}${k} missing`);
    match(`${at}${k}`, w, got[k]);
  }
}

function match(at, w, g) {
  if (w !== null && typeof w === "object" && !Array.isArray(w)) return subset(`${at}.`, w, g);
  if (Array.isArray(w) && w.length > 0 && w[0] !== null && typeof w[0] === "object" && !Array.isArray(w[0])) {
    assert.ok(Array.isArray(g) && g.length === w.length, `field ${at} is ${JSON.stringify(g)}, want ${w.length} objects like ${JSON.stringify(w)}`);
    w.forEach((x, i) => match(`${at}[${i}]`, x, g[i]));
    return;
  }
  assert.deepStrictEqual(g, w, `field ${at}`);
}

let server;
before(async () => { server = await startServer(); });
after(async () => { await server?.stop(); });

test("shared vectors", async () => {
  const clients = new Map([[null, new EngramClient({ url: server.url, apiKey: "", maxRetries: 0 })]]);
  for (const [name, k] of Object.entries(vectors.keys)) clients.set(name, new EngramClient({ url: server.url, apiKey: k.key, maxRetries: 0 }));
  const failures = [];
  for (const [i, cs] of vectors.cases.entries()) {
    const exp = cs.expect;
    let res, err;
    try {
      res = await call(clients.get(cs.as), cs);
    } catch (e) {
      err = e;
    }
    try {
      if (exp.status >= 400) {
        assert.ok(err instanceof EngramError, `got ${JSON.stringify(res)} / ${err}, want ${exp.status} ${exp.code}`);
        assert.equal(err.status, exp.status);
        assert.equal(err.code, exp.code);
        assert.equal(err.constructor, errorClasses[exp.code], `class ${err.constructor.name} for ${err.code}`);
        assert.ok(err.message);
        continue;
      }
      if (err) throw new assert.AssertionError({ message: `threw ${err}, want ${exp.status}` });
      if (exp.ids) assert.deepStrictEqual(idsOf(cs.op, res), exp.ids);
      if (exp.has_next !== undefined) assert.equal(Boolean(res.next_cursor), exp.has_next);
      if (exp.skipped_lines) assert.deepStrictEqual(res.skipped.map((s) => s.line), exp.skipped_lines);
      if (exp.tools_include) {
        const names = res.result.tools.map((t) => t.name);
        for (const n of exp.tools_include) assert.ok(names.includes(n), `tools ${names} lack ${n}`);
      }
      subset("", exp.json ?? {}, res);
      if (cs.op === "search" || cs.op === "inject") {
        for (const r of res.results) assert.ok(r.explain && "bm25" in r.explain && "boosts" in r.explain && r.explain.fused === r.explain.rrf);
      }
    } catch (e) {
      failures.push(`case ${i} ${JSON.stringify(cs.name)}: ${e.message}`);
    }
  }
  assert.deepStrictEqual(failures, []);
});

test("the served document is the one the types are generated from", async () => {
  const served = await new EngramClient({ url: server.url, apiKey: "" }).openapi();
  assert.deepStrictEqual(served, JSON.parse(readFileSync(join(repo, "server/httpapi/openapi.json"), "utf8")));
});

test("every operation of the document has a call and a vector", () => {
  const doc = JSON.parse(readFileSync(join(repo, "server/httpapi/openapi.json"), "utf8"));
  const ops = Object.values(doc.paths).flatMap((p) => Object.values(p)).filter((o) => o && o.operationId).map((o) => o.operationId);
  const byOp = new Map(vectors.cases.map((c) => [c.op, c]));
  for (const op of ops) assert.ok(byOp.has(op), `no vector for ${op}`);
});
