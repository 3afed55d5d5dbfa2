// npm's prepare script: builds dist/ with tsc, from the pinned typescript and
// @types/node of package-lock.json. npm runs prepare on `npm install`, `npm ci`
// and `npm pack` in this folder, and also when another project installs this
// folder (`npm install ./sdk/typescript`): npm then links the folder and runs
// prepare in it without installing its devDependencies. So when the build
// tools are missing, this installs them first (`npm ci --ignore-scripts` here:
// the registry only, the versions of the lockfile), then builds.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = join(dir, "node_modules", "typescript", "bin", "tsc");
const typesNode = join(dir, "node_modules", "@types", "node", "package.json");

function run(what, cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { cwd: dir, stdio: "inherit", env });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : r.signal ? `signal ${r.signal}` : `exit status ${r.status}`;
    console.error(`engram-memory: ${what} failed (${why}) in ${dir}`);
    process.exit(1);
  }
}

if (!existsSync(tsc) || !existsSync(typesNode)) {
  console.error("engram-memory: installing the build tools (typescript, @types/node) from package-lock.json to build dist/");
  // The installing project's npm settings that would redirect or trim this
  // install (its prefix, --omit=dev, --global, workspaces) are left out;
  // the registry, cache and proxy settings stay.
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    const key = k.toLowerCase();
    if (/^npm_config_(local_prefix|prefix|global|location|omit|include|production|only|workspaces?|include_workspace_root|save.*|dry_run|package_lock_only|install_links)$/.test(key)) continue;
    env[k] = v;
  }
  const npmCli = process.env.npm_execpath;
  const [cmd, pre] = npmCli && /\.c?js$/.test(npmCli) ? [process.execPath, [npmCli]] : ["npm", []];
  run("npm ci (the build tools)", cmd, [...pre, "ci", "--ignore-scripts", "--include=dev", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir], env);
}
run("tsc -p tsconfig.json", process.execPath, [tsc, "-p", "tsconfig.json"]);
