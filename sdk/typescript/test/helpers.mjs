// A real engram serve, built from this repository, on a free loopback port
// with the shared vectors' keys and their embedder.

import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const vectors = JSON.parse(readFileSync(join(repo, "sdk/testvectors/vectors.json"), "utf8"));

let built;
/** $ENGRAM_BIN, else engram built from the repository once. */
export function engramBin() {
  if (process.env.ENGRAM_BIN) return process.env.ENGRAM_BIN;
  if (!built) {
    const dir = mkdtempSync(join(tmpdir(), "engram-sdk-ts-bin-"));
    built = join(dir, "engram");
    execFileSync("go", ["build", "-o", built, "./cmd/engram"], { cwd: repo, stdio: "inherit", env: { ...process.env, CGO_ENABLED: "0" } });
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return built;
}

export function vectorKeys() {
  return Object.values(vectors.keys).filter((k) => k.scope).map((k) => ({ key: k.key, scope: k.scope }));
}

export function key(name) {
  return vectors.keys[name].key;
}

/** Starts engram serve on a fresh store (with the vectors' keys, or none with { keys: false });
 * stop() ends it by its PID. */
export async function startServer({ keys: withKeys = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "engram-sdk-ts-"));
  const keys = join(dir, "keys.json");
  writeFileSync(keys, JSON.stringify({ keys: vectorKeys() }));
  chmodSync(keys, 0o600);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ENGRAM_")));
  env.ENGRAM_EMBEDDER = vectors.embedder;
  const proc = spawn(engramBin(), ["--db", join(dir, "engram.db"), "serve", "--addr", "127.0.0.1:0", ...(withKeys ? ["--keys", keys] : [])],
    { env, stdio: ["ignore", "ignore", "pipe"] });
  const log = [];
  const url = await new Promise((resolveURL, reject) => {
    const timer = setTimeout(() => reject(new Error("engram serve did not start: " + log.join("\n"))), 120000);
    createInterface({ input: proc.stderr }).on("line", (line) => {
      log.push(line);
      const m = /^engram: serving .* on (http:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolveURL(m[1]);
      }
    });
    proc.on("exit", (code) => reject(new Error(`engram serve exited ${code}: ` + log.join("\n"))));
  });
  for (const deadline = Date.now() + 60000; ;) {
    try {
      if ((await fetch(url + "/readyz")).status === 200) break;
    } catch {}
    if (Date.now() > deadline) throw new Error("engram serve is not ready");
    await new Promise((r) => setTimeout(r, 20));
  }
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      const done = new Promise((r) => proc.once("exit", r));
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 30000);
      await done;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { url, stop };
}
