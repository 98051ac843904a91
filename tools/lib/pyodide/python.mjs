// A `python` for the checks, backed by a real CPython compiled to
// WebAssembly (the pyodide npm packages pinned in package.json), run by
// Node. It accepts what the checks pass to an interpreter:
//
//   node python.mjs PACKAGE_DIR [-S] [-I] [-B] [-u] -c CODE [ARGS...]
//   node python.mjs PACKAGE_DIR [-S] [-I] [-B] [-u] SCRIPT [ARGS...]
//   node python.mjs PACKAGE_DIR [-S] [-I] [-B] [-u] SCRIPT --serve
//
// The last is the protocol of tools/lib/crosscheck/forked_runs.py: one JSON
// request per line on stdin ({"args": [...], "cwd": DIR}), one answer per
// line on stdout ({"rc", "out", "err"}). Where a native server forks, this
// one runs each request in the one loaded interpreter and undoes its
// effects after it (driver.py; its serve() compiles the script's folder
// once). IMPSIM_PYODIDE_DEBUG=1 prints each request and its time. The
// host's folders are mounted at their own paths (all but /dev, /proc, /sys
// and /lib, which holds the interpreter's standard library), so scripts and
// the files they name are read in place.
// Any other switch is refused: these interpreters have no threads and no
// -X options, and a check that needs them must not think it ran.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const SWITCHES = new Set(["-S", "-I", "-B", "-u", "-E", "-s"]);

function die(message) {
  process.stderr.write(`pyodide python: ${message}\n`);
  process.exit(2);
}

const [packageDir, ...rest] = process.argv.slice(2);
if (!packageDir) die("usage: node python.mjs PACKAGE_DIR [-S -I -B] (-c CODE | SCRIPT) [ARGS...]");
let i = 0;
while (i < rest.length && SWITCHES.has(rest[i])) i++;
let kind;
let argv;
if (rest[i] === "-c") {
  if (i + 1 >= rest.length) die("-c needs its code");
  kind = "code";
  argv = rest.slice(i + 1);
} else if (i < rest.length && !rest[i].startsWith("-")) {
  kind = "script";
  argv = [resolve(rest[i]), ...rest.slice(i + 1)];
} else {
  die(`unsupported switch or no script: ${JSON.stringify(rest[i] ?? "")} (this interpreter takes -S -I -B -u, then -c CODE or a script)`);
}

const pyodideModule = join(resolve(packageDir), "pyodide.mjs");
try {
  statSync(pyodideModule);
} catch {
  die(`no interpreter at ${packageDir} (run npm ci in tools/lib/pyodide)`);
}
const { loadPyodide } = await import(pathToFileURL(pyodideModule).href);
const py = await loadPyodide({
  indexURL: resolve(packageDir) + "/",
  stdout: (s) => process.stderr.write(`[pyodide stdout] ${s}\n`),
  stderr: (s) => process.stderr.write(`[pyodide stderr] ${s}\n`),
});

const FS = py.FS;
const keep = new Set(["dev", "proc", "sys", "lib"]);
FS.chdir("/");
for (const name of readdirSync("/")) {
  if (keep.has(name)) continue;
  let isDir = false;
  try {
    isDir = statSync("/" + name).isDirectory();
  } catch {
    continue;
  }
  if (!isDir) continue;
  FS.mkdirTree("/" + name);
  FS.mount(FS.filesystems.NODEFS, { root: "/" + name }, "/" + name);
}

const driverSource = readFileSync(join(HERE, "driver.py"), "utf8");
const ns = py.globals.get("dict")();
py.runPython(driverSource, { globals: ns, filename: join(HERE, "driver.py") });
const runOne = ns.get("run");

function call(kind, args, cwd) {
  return JSON.parse(runOne(kind, py.toPy(args), cwd ?? "/"));
}

if (kind === "script" && argv.length === 2 && argv[1] === "--serve") {
  ns.get("serve")(argv[0]);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (e) {
      die(`--serve: a request is not JSON (${e.message})`);
    }
    if (process.env.IMPSIM_PYODIDE_DEBUG) { try { const c = JSON.parse(readFileSync(request.args[0], "utf8")); process.stderr.write(`[request] ${c.scenario?.name} ${c.variant}\n`); } catch { process.stderr.write(`[request] ${line}\n`); } }
    const started = performance.now();
    const answer = call("script", [argv[0], ...(request.args ?? [])], request.cwd);
    if (process.env.IMPSIM_PYODIDE_DEBUG) process.stderr.write(`[answered] in ${(performance.now() - started).toFixed(1)} ms\n`);
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
  process.exit(0);
}
const answer = call(kind, argv, process.cwd());
process.stdout.write(answer.out);
process.stderr.write(answer.err);
process.exitCode = answer.rc;
