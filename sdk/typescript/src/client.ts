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

function scopeString(scope: string | Scope): string {
  if (typeof scope === "string") return scope;
  return Object.keys(scope).sort().map((k) => `${k}=${scope[k]}`).join(",");
}

function idPath(id: string, suffix = ""): string {
  if (!id) throw new TypeError("id: must not be empty");
  return "/v1/memories/" + encodeURIComponent(id) + suffix;
}

function within(opts?: ByID): [string, string][] {
  return opts?.within ? [["scope", scopeString(opts.within)]] : [];
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

  /** POST /v1/memories: store one memory (an exact repeat without an id is merged). */
  add(memory: MemoryInput): Promise<AddResult> {
    return this.send({ method: "POST", path: "/v1/memories", json: memory, idempotent: false }) as Promise<AddResult>;
  }

  /** POST /v1/memories {"memories": [...]}: a batch, all or none. */
  addMany(memories: (MemoryInput | Memory)[]): Promise<AddResult> {
    if (memories.length === 0) throw new TypeError("memories: none given");
    return this.send({ method: "POST", path: "/v1/memories", json: { memories }, idempotent: false }) as Promise<AddResult>;
  }

  /** GET /v1/memories: one page; pass its next_cursor as cursor for the next. */
  listMemories(options: ListOptions = {}): Promise<ListPage> {
    const query: [string, string][] = [];
    for (const [k, v] of Object.entries(options)) {
      if (v === undefined || v === null) continue;
      if (k === "scope") query.push(["scope", scopeString(v as string | Scope)]);
      else if (Array.isArray(v)) for (const x of v) query.push([k, String(x)]);
      else query.push([k, String(v)]);
    }
    return this.send({ method: "GET", path: "/v1/memories", query, idempotent: true }) as Promise<ListPage>;
  }

  /** Every memory GET /v1/memories lists, page after page. */
  async *iterMemories(options: ListOptions = {}): AsyncGenerator<Memory> {
    let opts = { ...options };
    for (;;) {
      const page = await this.listMemories(opts);
      yield* page.memories;
      if (!page.next_cursor) return;
      opts = { ...opts, cursor: page.next_cursor };
    }
  }

  /** DELETE /v1/memories?scope=: forget every memory of a scope (inside the key's). */
  deleteScope(scope: string | Scope): Promise<Deleted> {
    const s = scopeString(scope);
    return this.send({ method: "DELETE", path: "/v1/memories", query: s ? [["scope", s]] : [], idempotent: true }) as Promise<Deleted>;
  }

  /** GET /v1/memories/{id}. */
  get(id: string, opts?: ByID): Promise<Memory> {
    return this.send({ method: "GET", path: idPath(id), query: within(opts), idempotent: true }) as Promise<Memory>;
  }

  /** PATCH /v1/memories/{id}: change the fields given (retried: a patch sets what it names). */
  update(id: string, patch: Patch, opts?: ByID): Promise<Memory> {
    return this.send({ method: "PATCH", path: idPath(id), query: within(opts), json: patch, idempotent: true }) as Promise<Memory>;
  }

  /** DELETE /v1/memories/{id}. */
  delete(id: string, opts?: ByID): Promise<Deleted> {
    return this.send({ method: "DELETE", path: idPath(id), query: within(opts), idempotent: true }) as Promise<Deleted>;
  }

  /** POST /v1/memories/{id}/favorite: mark (or with false unmark) a favorite. */
  favorite(id: string, favorite = true, opts?: ByID): Promise<Memory> {
    return this.send({ method: "POST", path: idPath(id, "/favorite"), query: within(opts), json: { favorite }, idempotent: true }) as Promise<Memory>;
  }

  /** GET /v1/memories/{id}/history: every version of what the memory says (what it supersedes and what supersedes it), oldest first. */
  history(id: string, opts?: ByID): Promise<History> {
    return this.send({ method: "GET", path: idPath(id, "/history"), query: within(opts), idempotent: true }) as Promise<History>;
  }

  // ---- conversations ----

  /** POST /v1/episodes: store a conversation's messages as memories of the episode, each at its
   * position (id EPISODE:SEQ). Storing it again updates its memories instead of adding them twice and
   * leaves alone the turns they already hold (so a retry is safe); ids lists every message's memory in order. */
  addEpisode(episode: Episode): Promise<AddResult> {
    return this.send({ method: "POST", path: "/v1/episodes", json: episode, idempotent: true }) as Promise<AddResult>;
  }

  /** POST /v1/memories/{id}/touch: record a use (never repeated behind the caller's back). */
  touch(id: string, opts?: ByID): Promise<Touched> {
    return this.send({ method: "POST", path: idPath(id, "/touch"), query: within(opts), idempotent: false }) as Promise<Touched>;
  }

  // ---- recall and delivery ----

  /** POST /v1/search: every result with its explain. Retried only with no_record (else it counts uses). */
  search(query: Query): Promise<SearchResponse> {
    return this.send({ method: "POST", path: "/v1/search", json: query, idempotent: query.no_record === true }) as Promise<SearchResponse>;
  }

  /** POST /v1/inject: only what clears the relevance bar, within a budget. */
  inject(request: InjectRequest): Promise<Injection> {
    return this.send({ method: "POST", path: "/v1/inject", json: request, idempotent: request.no_record === true }) as Promise<Injection>;
  }

  /** POST /v1/brief: favorites, most used, most recent, within a budget (records no use). */
  brief(request: BriefRequest = {}): Promise<Brief> {
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
