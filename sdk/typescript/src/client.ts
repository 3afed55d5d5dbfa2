// The client of one engram serve: every route of the OpenAPI document, over
// the built-in fetch (the export over node:http, which passes trailers on).

import * as http from "node:http";
import * as https from "node:https";

import { EngramError, ExportIncomplete, Timeout, Unreachable, errorFrom } from "./errors.js";
import type { components, operations } from "./openapi.js";

type S = components["schemas"];
export type Scope = S["Scope"];
export type Memory = S["Memory"];
export type MemoryInput = S["MemoryInput"];
export type AddResult = S["AddResult"];
export type ListPage = S["ListPage"];
export type Patch = S["Patch"];
export type Query = S["Query"];
export type SearchResponse = S["Response"];
export type Result = S["Result"];
export type Explain = S["Explain"];
export type InjectRequest = S["InjectRequest"];
export type Injection = S["Injection"];
export type BriefRequest = S["BriefRequest"];
export type Brief = S["Brief"];
export type ImportResult = S["ImportResult"];
export type Stats = S["Stats"];
export type Deleted = S["Deleted"];
export type Touched = S["Touched"];
export type Status = S["Status"];
/** POST /v1/episodes's body: a conversation to store, each message at its position. */
export type Episode = S["Episode"];
/** One turn of an Episode. */
export type Message = S["Message"];
/** One memory of a supersession chain: the memory, what superseded it and when, whether it is current. */
export type Version = S["Version"];
/** GET /v1/memories/{id}/history's answer: every version, oldest first. */
export type History = S["History"];
/** A memory next to a result in its episode (offset -1: the one before, 1: the one after). */
export type Neighbour = S["Neighbour"];
/** A date phrase a search read in its query and the span it names, [since, until). */
export type TimeWindow = S["TimeWindow"];

type ListQuery = NonNullable<operations["listMemories"]["parameters"]["query"]>;
/** GET /v1/memories's filters; scope as "k=v,k=v" or an object, tag one or several. */
export type ListOptions = Omit<ListQuery, "scope" | "tag"> & { scope?: string | Scope; tag?: string | string[] };

/** What add() answers: AddResult and, for the one memory it stored (or merged into), its id. */
export type Added = AddResult & { id: string };

/** What addMessages() answers: AddResult and the episode the messages were stored as. */
export type AddedMessages = AddResult & { episode: string };

/** A memory as a by-id call takes it: its id, or anything that carries one (a Memory, a Result, a Version,
 * what add() answered; an AddResult of several memories names none: pass one of its ids). */
export type MemoryRef = string | { id: string } | { ids: string[] };

/** T whose supersedes may be given as a memory or what names one, as the by-id calls take it. */
export type WithRef<T> = Omit<T, "supersedes"> & { supersedes?: MemoryRef };

/** A chat message as chat APIs (and mem0's client) give it, or as POST /v1/episodes takes it. */
export type ChatMessage =
  | { role: string; content: string; occurred_at?: string; seq?: number; metadata?: Record<string, unknown> }
  | Message;

/** addMessages()'s options: the episode to store the messages as (default a new one, "chat-" and 12 hex
 * digits) and what every message's memory carries. */
export type AddMessagesOptions = Omit<Episode, "messages" | "episode"> & { episode?: string };

/** Narrows a by-id call to one of several memories with the id below the caller's scope (?scope=). */
export interface ByID { within?: string | Scope }

/** What importJsonl streams: JSONL text or bytes, or memories (objects) or lines, in order. */
export type ImportSource =
  | string
  | Uint8Array
  | Iterable<MemoryInput | Memory | string>
  | AsyncIterable<MemoryInput | Memory | string | Uint8Array>;

export interface ClientOptions {
  /** Default $ENGRAM_URL, else http://127.0.0.1:7077. */
  url?: string;
  /** Default $ENGRAM_API_KEY; a server without keys needs none ("" sends none). */
  apiKey?: string;
  /** Per request, default 30000; 0 waits for ever. */
  timeoutMs?: number;
  /** Retries of calls that are safe to repeat, on 429, 5xx and failed connections; default 2. */
  maxRetries?: number;
  /** First backoff, doubled each retry with jitter; default 250. */
  backoffMs?: number;
  /** Longest wait between tries; default 8000. */
  maxBackoffMs?: number;
  headers?: Record<string, string>;
}

export const DEFAULT_URL = "http://127.0.0.1:7077";
export const VERSION = "0.1.0";
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const EXPORT_TRAILER = "engram-export-count";

interface Call {
  method: string;
  path: string;
  query?: [string, string][];
  json?: unknown;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
  headers?: Record<string, string>;
  idempotent: boolean;
}

function scopeString(scope: string | Scope, param = "scope"): string {
  if (typeof scope === "string") return scope;
  if (scope === null || typeof scope !== "object" || Array.isArray(scope)) {
    throw new TypeError(`${param}: want "key=value,..." or an object such as { user: "u1" }, not ${describe(scope)}`);
  }
  for (const [k, v] of Object.entries(scope)) {
    if (typeof v !== "string") throw new TypeError(`${param}.${k}: want a string, not ${describe(v)}`);
  }
  return Object.keys(scope).sort().map((k) => `${k}=${scope[k]}`).join(",");
}

/** Throws a TypeError naming param unless v is a plain object. */
function needObject(param: string, v: unknown, example: string): void {
  if (!plainObject(v)) throw new TypeError(`${param}: want an object such as ${example}, not ${describe(v)}`);
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (typeof v === "object") return `an object with the fields ${JSON.stringify(Object.keys(v as object))}`;
  return typeof v === "string" ? JSON.stringify(v) : `${typeof v} ${String(v)}`;
}

/** The memory id a by-id call's argument names; errors name the parameter. */
export function idOf(ref: MemoryRef, param = "id"): string {
  if (typeof ref === "string") {
    if (!ref) throw new TypeError(`${param}: must not be empty`);
    return ref;
  }
  if (ref !== null && typeof ref === "object" && !Array.isArray(ref)) {
    const o = ref as { id?: unknown; ids?: unknown };
    if (typeof o.id === "string" && o.id) return o.id;
    if (Array.isArray(o.ids)) {
      if (o.ids.length === 1 && typeof o.ids[0] === "string" && o.ids[0]) return o.ids[0];
      throw new TypeError(`${param}: an AddResult of ${o.ids.length} memories names no single one; pass one of its ids`);
    }
  }
  throw new TypeError(`${param}: want a memory id (string), a Memory, a Result or what add() answered, not ${describe(ref)}`);
}

function idPath(ref: MemoryRef, suffix = ""): string {
  return "/v1/memories/" + encodeURIComponent(idOf(ref)) + suffix;
}

function plainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/** A chat message ({role, content}, or {speaker, text}) as POST /v1/episodes takes it. */
function episodeMessage(m: unknown, i: number): Message {
  const at = `messages[${i}]`;
  if (!plainObject(m)) throw new TypeError(`${at}: want an object {role, content} or {speaker, text}, not ${describe(m)}`);
  const { role, content, speaker, text, ...rest } = m;
  if (role !== undefined && speaker !== undefined) throw new TypeError(`${at}: give role or speaker, not both`);
  if (content !== undefined && text !== undefined) throw new TypeError(`${at}: give content or text, not both`);
  const who = role ?? speaker;
  const said = content ?? text;
  const whoName = role !== undefined ? "role" : "speaker";
  const saidName = content !== undefined ? "content" : "text";
  if (who !== undefined && typeof who !== "string") throw new TypeError(`${at}.${whoName}: want a string, not ${describe(who)}`);
  if (said === undefined) throw new TypeError(`${at}: no content (or text)`);
  if (typeof said !== "string") {
    throw new TypeError(`${at}.${saidName}: want a string, not ${describe(said)} (join a message's text parts first)`);
  }
  for (const k of Object.keys(rest)) {
    if (!["occurred_at", "seq", "metadata"].includes(k)) {
      throw new TypeError(`${at}.${k}: unknown field; a message has role (or speaker), content (or text), occurred_at, seq, metadata`);
    }
  }
  return { ...(who !== undefined ? { speaker: who } : {}), text: said, ...rest } as Message;
}

/** obj with a supersedes given as a memory (or what names one) as its id. */
function withRef<T extends { supersedes?: unknown }>(obj: T, param: string): Omit<T, "supersedes"> & { supersedes?: string } {
  const v = obj.supersedes;
  if (v === undefined || v === null || typeof v === "string") return obj as Omit<T, "supersedes"> & { supersedes?: string };
  return { ...obj, supersedes: idOf(v as MemoryRef, param) };
}

function newEpisode(): string {
  const b = new Uint8Array(6);
  crypto.getRandomValues(b);
  return "chat-" + Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

function within(opts?: ByID): [string, string][] {
  if (opts === undefined) return [];
  needObject("opts", opts, '{ within: "user=u1" }');
  return opts.within ? [["scope", scopeString(opts.within, "opts.within")]] : [];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function jsonLine(item: unknown): string {
  const line = typeof item === "string" ? item : JSON.stringify(item);
  return line.endsWith("\n") ? line : line + "\n";
}

function importStream(source: ImportSource): string | Uint8Array | ReadableStream<Uint8Array> {
  if (typeof source === "string" || source instanceof Uint8Array) return source;
  const enc = new TextEncoder();
  const it: AsyncIterator<unknown> | Iterator<unknown> =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<unknown>)[Symbol.asyncIterator]()
      : (source as Iterable<unknown>)[Symbol.iterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await it.next();
      if (r.done) {
        controller.close();
        return;
      }
      controller.enqueue(r.value instanceof Uint8Array ? r.value : enc.encode(jsonLine(r.value)));
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/** A client of one engram serve. Every API error throws the EngramError subclass named after its code. */
export class EngramClient {
  readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(options: ClientOptions = {}) {
    const url = (options.url ?? process.env.ENGRAM_URL ?? DEFAULT_URL).replace(/\/+$/, "");
    if (!/^https?:\/\//.test(url)) throw new TypeError(`url ${JSON.stringify(url)}: want http://HOST:PORT or https://HOST:PORT`);
    this.url = url;
    const key = options.apiKey ?? process.env.ENGRAM_API_KEY ?? "";
    this.headers = { "User-Agent": `engram-memory-typescript/${VERSION}`, ...(key ? { Authorization: `Bearer ${key}` } : {}), ...options.headers };
    this.timeoutMs = options.timeoutMs ?? 30000;
    this.maxRetries = options.maxRetries ?? 2;
    if (this.maxRetries < 0) throw new RangeError(`maxRetries ${this.maxRetries}: must not be negative`);
    this.backoffMs = options.backoffMs ?? 250;
    this.maxBackoffMs = options.maxBackoffMs ?? 8000;
  }

  private delay(attempt: number, retryAfter: string | null): number {
    let d = Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt) * (0.5 + Math.random() / 2);
    if (retryAfter && /^\d+$/.test(retryAfter)) d = Math.max(d, Number(retryAfter) * 1000);
    return Math.min(d, this.maxBackoffMs);
  }

  private async send(c: Call): Promise<unknown> {
    const u = new URL(this.url + c.path);
    for (const [k, v] of c.query ?? []) u.searchParams.append(k, v);
    const headers: Record<string, string> = { ...this.headers, ...c.headers };
    let body = c.body;
    if (c.json !== undefined) {
      body = JSON.stringify(c.json);
      headers["Content-Type"] = "application/json";
    }
    for (let attempt = 0; ; attempt++) {
      const retryable = c.idempotent && attempt < this.maxRetries;
      let resp: Response;
      try {
        const init: RequestInit & { duplex?: "half" } = { method: c.method, headers, body: body ?? null };
        if (body instanceof ReadableStream) init.duplex = "half";
        if (this.timeoutMs > 0) init.signal = AbortSignal.timeout(this.timeoutMs);
        resp = await fetch(u, init);
      } catch (err) {
        if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) {
          throw new Timeout(`${c.method} ${c.path}: no answer within ${this.timeoutMs}ms`, { cause: err });
        }
        if (retryable) {
          await sleep(this.delay(attempt, null));
          continue;
        }
        const why = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
        throw new Unreachable(`${c.method} ${c.path}: ${why}`, { cause: err });
      }
      let text: string;
      try {
        text = await resp.text();
      } catch (err) {
        if (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")) {
          throw new Timeout(`${c.method} ${c.path}: the answer did not arrive within ${this.timeoutMs}ms`, { cause: err });
        }
        throw new Unreachable(`${c.method} ${c.path}: reading the answer: ${String(err)}`, { cause: err });
      }
      if (retryable && RETRY_STATUSES.has(resp.status)) {
        await sleep(this.delay(attempt, resp.headers.get("Retry-After")));
        continue;
      }
      if (resp.status >= 400) throw errorFrom(resp.status, text, `HTTP ${resp.status} ${resp.statusText}`.trim());
      if (!text) return {};
      try {
        return JSON.parse(text);
      } catch (err) {
        throw new EngramError(`${c.method} ${c.path}: answer is not JSON: ${String(err)}`, { code: "bad_answer", status: resp.status });
      }
    }
  }

  // ---- memories ----

  /** POST /v1/memories: store one memory (an exact repeat without an id is merged). The answer's id
   * is the memory that holds it (its own, or the one it was merged into): get, update, delete and
   * the other by-id calls take the answer itself. */
  async add(memory: WithRef<MemoryInput>): Promise<Added> {
    if (Array.isArray(memory)) {
      throw new TypeError("memory: an array; store chat messages with addMessages(messages), several memories with addMany(memories)");
    }
    if (!plainObject(memory)) throw new TypeError(`memory: want an object such as { text: "..." }, not ${describe(memory)}`);
    if (typeof memory.text !== "string") throw new TypeError(`memory.text: want a string, not ${describe(memory.text)}`);
    const body = withRef(memory, "memory.supersedes");
    const res = (await this.send({ method: "POST", path: "/v1/memories", json: body, idempotent: false })) as AddResult;
    return { ...res, id: res.ids[0] ?? "" };
  }

  /** POST /v1/memories {"memories": [...]}: a batch, all or none. */
  async addMany(memories: (WithRef<MemoryInput> | Memory)[]): Promise<AddResult> {
    if (!Array.isArray(memories)) throw new TypeError(`memories: want an array of memories, not ${describe(memories)}`);
    if (memories.length === 0) throw new TypeError("memories: none given");
    const body = memories.map((m, i) => {
      if (!plainObject(m)) throw new TypeError(`memories[${i}]: want an object such as { text: "..." }, not ${describe(m)}`);
      return withRef(m, `memories[${i}].supersedes`);
    });
    return this.send({ method: "POST", path: "/v1/memories", json: { memories: body }, idempotent: false }) as Promise<AddResult>;
  }

  /** GET /v1/memories: one page; pass its next_cursor as cursor for the next. */
  async listMemories(options: ListOptions = {}): Promise<ListPage> {
    needObject("options", options, '{ scope: "user=u1", limit: 50 }');
    const query: [string, string][] = [];
    for (const [k, v] of Object.entries(options)) {
      if (v === undefined || v === null) continue;
      if (k === "scope") query.push(["scope", scopeString(v as string | Scope, "options.scope")]);
      else if (Array.isArray(v)) for (const x of v) query.push([k, String(x)]);
      else query.push([k, String(v)]);
    }
    return this.send({ method: "GET", path: "/v1/memories", query, idempotent: true }) as Promise<ListPage>;
  }

  /** Every memory GET /v1/memories lists, page after page. */
  async *iterMemories(options: ListOptions = {}): AsyncGenerator<Memory> {
    needObject("options", options, '{ scope: "user=u1" }');
    let opts = { ...options };
    for (;;) {
      const page = await this.listMemories(opts);
      yield* page.memories;
      if (!page.next_cursor) return;
      opts = { ...opts, cursor: page.next_cursor };
    }
  }

  /** DELETE /v1/memories?scope=: forget every memory of a scope (inside the key's). */
  async deleteScope(scope: string | Scope): Promise<Deleted> {
    const s = scopeString(scope);
    return this.send({ method: "DELETE", path: "/v1/memories", query: s ? [["scope", s]] : [], idempotent: true }) as Promise<Deleted>;
  }

  /** mem0's reset: without a scope, DELETE /v1/memories?all=true, every memory of the API key's scope
   * (refused, BadRequest, by a server without keys: that would be the whole store); with one,
   * DELETE /v1/memories?scope=, every memory of that scope (inside the key's). Episodes and versions
   * go with them. */
  async reset(scope?: string | Scope): Promise<Deleted> {
    if (scope === undefined) return this.send({ method: "DELETE", path: "/v1/memories", query: [["all", "true"]], idempotent: true }) as Promise<Deleted>;
    if (typeof scope !== "string" && !plainObject(scope)) {
      throw new TypeError(`scope: want "key=value,..." or an object such as { user: "u1" }, not ${describe(scope)}`);
    }
    if (!scopeString(scope)) throw new TypeError("scope: empty; reset() without a scope forgets every memory of the API key's scope");
    return this.deleteScope(scope);
  }

  /** GET /v1/memories/{id}. */
  async get(id: MemoryRef, opts?: ByID): Promise<Memory> {
    return this.send({ method: "GET", path: idPath(id), query: within(opts), idempotent: true }) as Promise<Memory>;
  }

  /** PATCH /v1/memories/{id}: change the fields given (retried: a patch sets what it names). */
  async update(id: MemoryRef, patch: WithRef<Patch>, opts?: ByID): Promise<Memory> {
    if (!plainObject(patch)) throw new TypeError(`patch: want an object of the fields to change, not ${describe(patch)}`);
    return this.send({ method: "PATCH", path: idPath(id), query: within(opts), json: withRef(patch, "patch.supersedes"), idempotent: true }) as Promise<Memory>;
  }

  /** DELETE /v1/memories/{id}. */
  async delete(id: MemoryRef, opts?: ByID): Promise<Deleted> {
    return this.send({ method: "DELETE", path: idPath(id), query: within(opts), idempotent: true }) as Promise<Deleted>;
  }

  /** POST /v1/memories/{id}/favorite: mark (or with false unmark) a favorite. */
  async favorite(id: MemoryRef, favorite = true, opts?: ByID): Promise<Memory> {
    return this.send({ method: "POST", path: idPath(id, "/favorite"), query: within(opts), json: { favorite }, idempotent: true }) as Promise<Memory>;
  }

  /** GET /v1/memories/{id}/history: every version of what the memory says (what it supersedes and what supersedes it), oldest first. */
  async history(id: MemoryRef, opts?: ByID): Promise<History> {
    return this.send({ method: "GET", path: idPath(id, "/history"), query: within(opts), idempotent: true }) as Promise<History>;
  }

  // ---- conversations ----

  /** POST /v1/episodes: store a conversation's messages as memories of the episode, each at its
   * position (id EPISODE:SEQ). Storing it again updates its memories instead of adding them twice and
   * leaves alone the turns they already hold (so a retry is safe); ids lists every message's memory in order. */
  async addEpisode(episode: Episode): Promise<AddResult> {
    needObject("episode", episode, '{ episode: "chat-1", messages: [{ speaker: "user", text: "hi" }] }');
    return this.send({ method: "POST", path: "/v1/episodes", json: episode, idempotent: true }) as Promise<AddResult>;
  }

  /** POST /v1/episodes from chat messages ({role, content}, as chat APIs and mem0's add take them, or
   * {speaker, text}): each becomes a memory of the episode at its position (id EPISODE:SEQ, speaker
   * the role). Without options.episode a new episode is named; pass the answer's episode to add the
   * next messages of the same conversation (with first_seq, or the whole transcript again: what is
   * stored already is left alone). */
  async addMessages(messages: ChatMessage[], options: AddMessagesOptions = {}): Promise<AddedMessages> {
    if (!Array.isArray(messages)) throw new TypeError(`messages: want an array of {role, content}, not ${describe(messages)}`);
    if (messages.length === 0) throw new TypeError("messages: none given");
    if (!plainObject(options)) throw new TypeError(`options: want an object such as { episode: "chat-1" }, not ${describe(options)}`);
    const episode = options.episode ?? newEpisode();
    if (typeof episode !== "string" || !episode) throw new TypeError(`options.episode: want a non-empty string, not ${describe(episode)}`);
    const body: Episode = { ...options, episode, messages: messages.map(episodeMessage) };
    return this.addEpisode(body).then((res) => ({ ...res, episode }));
  }

  /** POST /v1/memories/{id}/touch: record a use (never repeated behind the caller's back). */
  async touch(id: MemoryRef, opts?: ByID): Promise<Touched> {
    return this.send({ method: "POST", path: idPath(id, "/touch"), query: within(opts), idempotent: false }) as Promise<Touched>;
  }

  // ---- recall and delivery ----

  /** POST /v1/search: every result with its explain. Retried only with no_record (else it counts uses). */
  async search(query: Query): Promise<SearchResponse> {
    needObject("query", query, '{ query: "where is the deploy key", limit: 5 }');
    return this.send({ method: "POST", path: "/v1/search", json: query, idempotent: query.no_record === true }) as Promise<SearchResponse>;
  }

  /** POST /v1/inject: only what clears the relevance bar, within a budget. */
  async inject(request: InjectRequest): Promise<Injection> {
    needObject("request", request, '{ prompt: "how do we deploy?" }');
    return this.send({ method: "POST", path: "/v1/inject", json: request, idempotent: request.no_record === true }) as Promise<Injection>;
  }

  /** POST /v1/brief: favorites, most used, most recent, within a budget (records no use). */
  async brief(request: BriefRequest = {}): Promise<Brief> {
    needObject("request", request, "{ budget: 500 }");
    return this.send({ method: "POST", path: "/v1/brief", json: request, idempotent: true }) as Promise<Brief>;
  }

  // ---- bulk ----

  /** POST /v1/import, streamed; all or nothing unless skipInvalid. */
  importJsonl(source: ImportSource, opts: { skipInvalid?: boolean } = {}): Promise<ImportResult> {
    return this.send({
      method: "POST", path: "/v1/import", query: opts.skipInvalid ? [["skip_invalid", "true"]] : [],
      body: importStream(source), headers: { "Content-Type": "application/x-ndjson" }, idempotent: false,
    }) as Promise<ImportResult>;
  }

  /** GET /v1/export: every memory of the caller's scope in id order, as it arrives. Throws
   * ExportIncomplete at the end if the stream was cut or its Engram-Export-Count trailer is missing or wrong. */
  async *export(): AsyncGenerator<Memory> {
    for await (const line of this.exportLines()) yield JSON.parse(line) as Memory;
  }

  /** GET /v1/export as raw JSONL lines (each with its newline), trailer checked at the end. */
  async *exportLines(): AsyncGenerator<string> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.openExport();
      const status = res.statusCode ?? 0;
      if (status >= 300) {
        const text = await readAll(res);
        if (RETRY_STATUSES.has(status) && attempt < this.maxRetries) {
          await sleep(this.delay(attempt, String(res.headers["retry-after"] ?? "")));
          continue;
        }
        throw errorFrom(status, text, `HTTP ${status} ${res.statusMessage ?? ""}`.trim());
      }
      res.setEncoding("utf8");
      let partial = "";
      let count = 0;
      try {
        for await (const chunk of res as AsyncIterable<string>) {
          const parts = (partial + chunk).split("\n");
          partial = parts.pop() ?? "";
          for (const p of parts) {
            count++;
            yield p + "\n";
          }
        }
      } catch (err) {
        if (err instanceof EngramError) throw err;
        throw new ExportIncomplete(`export cut after ${count} lines: ${String(err)}`, { cause: err });
      }
      if (!res.complete) throw new ExportIncomplete(`export cut after ${count} lines`);
      if (partial) throw new ExportIncomplete(`export ends inside line ${count + 1} (no newline)`);
      const trailer = res.trailers[EXPORT_TRAILER];
      if (trailer === undefined) throw new ExportIncomplete(`export of ${count} lines ended without the Engram-Export-Count trailer`);
      if (trailer.trim() !== String(count)) throw new ExportIncomplete(`export read ${count} lines, the trailer says ${JSON.stringify(trailer)}`);
      return;
    }
  }

  private openExport(): Promise<http.IncomingMessage> {
    const u = new URL(this.url + "/v1/export");
    const mod = u.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const req = mod.request(u, { method: "GET", headers: { ...this.headers, Accept: "application/x-ndjson", TE: "trailers" } }, (res) => {
        if (this.timeoutMs > 0) {
          res.socket.setTimeout(this.timeoutMs, () =>
            res.destroy(new Timeout(`export: nothing arrived within ${this.timeoutMs}ms`)));
        }
        resolve(res);
      });
      if (this.timeoutMs > 0) {
        req.setTimeout(this.timeoutMs, () => req.destroy(new Timeout(`GET /v1/export: no answer within ${this.timeoutMs}ms`)));
      }
      req.on("error", (err) => reject(err instanceof EngramError ? err : new Unreachable(`GET /v1/export: ${err.message}`, { cause: err })));
      req.end();
    });
  }

  /** GET /v1/stats. */
  stats(): Promise<Stats> {
    return this.send({ method: "GET", path: "/v1/stats", idempotent: true }) as Promise<Stats>;
  }

  // ---- the server ----

  /** GET /healthz (no key needed). */
  healthz(): Promise<Status> {
    return this.send({ method: "GET", path: "/healthz", idempotent: true }) as Promise<Status>;
  }

  /** GET /readyz (no key needed); Unavailable while not ready. */
  readyz(): Promise<Status> {
    return this.send({ method: "GET", path: "/readyz", idempotent: true }) as Promise<Status>;
  }

  /** GET /openapi.json: the API's OpenAPI 3.1 document. */
  openapi(): Promise<Record<string, unknown>> {
    return this.send({ method: "GET", path: "/openapi.json", idempotent: true }) as Promise<Record<string, unknown>>;
  }

  /** POST /mcp: one JSON-RPC 2.0 message to the MCP tools, its answer. */
  mcp(message: { jsonrpc: "2.0"; id?: unknown; method: string; params?: Record<string, unknown> }): Promise<Record<string, unknown>> {
    return this.send({
      method: "POST", path: "/mcp", json: message, headers: { Accept: "application/json, text/event-stream" }, idempotent: false,
    }) as Promise<Record<string, unknown>>;
  }

  /** Any request, its JSON answer; errors throw as every call's do. */
  request(method: string, path: string, opts: { query?: [string, string][]; json?: unknown; body?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<unknown> {
    if (!path.startsWith("/")) throw new TypeError(`path ${JSON.stringify(path)}: want an absolute path such as /v1/stats`);
    const m = method.toUpperCase();
    return this.send({ method: m, path, query: opts.query, json: opts.json, body: opts.body, headers: opts.headers, idempotent: m === "GET" || m === "HEAD" || m === "DELETE" });
  }
}

async function readAll(res: http.IncomingMessage): Promise<string> {
  res.setEncoding("utf8");
  let s = "";
  for await (const chunk of res as AsyncIterable<string>) s += chunk;
  return s;
}
