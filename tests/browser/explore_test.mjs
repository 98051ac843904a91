// impsim explore in a real browser: Debian's headless Chromium
// (/usr/bin/chromium, never a downloaded one), driven by playwright-core.
// Generates pages with the impsim under test, steps through them with the
// keyboard as a reader would, and checks that what the page SHOWS (the
// meta_path length, the counters, the reason) equals `impsim trace` (text)
// and `impsim run --json` at the same points; for a hook scenario (the
// zoo's distutils_hack_nested), sys.meta_path as finder objects and the
// object asked at every ask, and a reentrancy guard's state (ddtrace's
// watchdogs); a threaded scenario's rows, each thread's call stack and a
// hang's waits; virtualenv's deadlock without threads (its hook lock's rows
// and the hang); a lazy import's statement and its resolution (PEP 810);
// and that hostile names and descriptions neither break the page nor run
// as script. Saves screenshots.
// Load time and page size of the seed incident are measured and printed,
// never asserted (noisy machines).
//
//   node explore_test.mjs            (tools/test runs it; IMPSIM=path/to/impsim)
//   SHOTS=dir node explore_test.mjs  (where the screenshots go; default build/browser-test)
//   FIGURES=docs/figures node explore_test.mjs --figures   (tools/gen/make_tutorial_figures)
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const impsim = path.resolve(process.env.IMPSIM || path.join(root, "build", "impsim"));
const figures = process.argv.includes("--figures");
const shots = path.resolve(process.env.SHOTS || path.join(root, "build", "browser-test"));
const work = fs.mkdtempSync(path.join(os.tmpdir(), "impsim-explore-"));
fs.mkdirSync(shots, { recursive: true });

let failures = 0, checks = 0;
function check(ok, what) {
  checks++;
  if (!ok) {
    failures++;
    console.log("FAIL " + what);
  }
}
function eq(actual, expected, what) {
  check(String(actual) === String(expected), `${what}: page shows ${actual}, expected ${expected}`);
}
const run = (...args) => execFileSync(impsim, args, { cwd: root, maxBuffer: 1 << 30 }).toString();
const num = (s) => Number(String(s).replace(/,/g, ""));

// The asks of P in a text trace, in order: meta_path length and reason.
function traceAsks(text) {
  const asks = {};
  let variant = null;
  for (const line of text.split("\n")) {
    const v = line.match(/^== variant (\S+)/);
    if (v) { variant = v[1]; asks[variant] = []; continue; }
    const m = line.match(/ask i=\d+ \[(.*?)\]: P \(copy \d+ of (\d+)\)\.find_spec\('([^']*)'\)(?: \[([^\]]*)\])?(.*)$/);
    if (!m) continue;
    const suppressed = m[5].match(/\(suppressed: (.*)\)/);
    asks[variant].push({ len: num(m[2]) + 3, name: m[3], reason: m[4] || (suppressed ? "suppressed: " + suppressed[1] : null) });
  }
  return asks;
}

const flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const profile = fs.mkdtempSync(path.join(os.tmpdir(), "impsim-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: flags,
  viewport: { width: 1500, height: 980 },
});
// No network: every request but the page's own file is refused and counted.
let network = 0;
await context.route("**/*", (route) => {
  if (route.request().url().startsWith("file://")) return route.continue();
  network++;
  return route.abort();
});
const page = context.pages()[0] || (await context.newPage());

async function open(file) {
  const t0 = Date.now();
  await page.goto("file://" + file);
  await page.waitForSelector("body[data-ready='1']", { timeout: 60000 });
  return { wall: Date.now() - t0, script: await page.evaluate(() => window.impsimReady) };
}
const pane = (v) => page.locator(`#pane-${v}`);
async function shown(v) {
  const p = pane(v);
  const counters = {};
  for (const c of ["asks", "suppressed", "lookups", "toggles", "walks", "comparisons", "max_depth"])
    counters[c] = num(await p.locator(`[data-counter=${c}]`).innerText());
  const mp = await p.locator(".muted[data-len]").getAttribute("data-len");
  const reason = (await p.locator("[data-field=reason]").count()) ? await p.locator("[data-field=reason]").innerText() : "";
  return { row: num(await p.getAttribute("data-row")), kind: await p.getAttribute("data-kind"), counters,
           metaPath: num(mp), reason, event: await p.locator("[data-field=event]").innerText() };
}
async function focus(v) {
  await pane(v).locator("h2").click();
}
async function press(key, times = 1) {
  for (let i = 0; i < times; i++) await page.keyboard.press(key);
}
// Steps side v from its first row to its last, calling visit(pane, event)
// at each; a visit that returns true stops there.
async function eachRow(v, visit) {
  await focus(v);
  await press("Home");
  for (let last = -1;;) {
    const p = pane(v);
    const r = num(await p.getAttribute("data-row"));
    if (r === last) return;
    last = r;
    if (await visit(p, await p.locator("[data-field=event]").innerText())) return;
    await press("ArrowRight");
  }
}

// --- 1. nested_guards k=2, no folding: every ask of P, in order, against `impsim trace` -----------
{
  const file = path.join(work, "k2.html");
  run("explore", "scenarios/nested_guards.json", "--set", "k=2", "--no-fold", "-o", file);
  const text = run("trace", "scenarios/nested_guards.json", "--set", "k=2", "--max-lines", "0");
  const json = JSON.parse(run("run", "scenarios/nested_guards.json", "--set", "k=2", "--json"));
  const expected = traceAsks(text);
  await open(file);
  for (const v of ["before", "after"]) {
    await focus(v);
    await press("Home");
    const seen = [];
    let last = -1;
    for (;;) {
      const s = await shown(v);
      if (s.row === last) break;
      last = s.row;
      if (s.kind === "a" && /= P \(copy/.test(s.event)) {
        const name = s.event.match(/find_spec\('([^']*)'\)/)[1];
        await press("ArrowRight");
        const d = await shown(v);  // the decision row: the reason
        seen.push({ len: s.metaPath, name, reason: d.kind === "r" ? d.reason : null });
        last = d.row;
        if (seen.length === 4 && v === "before") await page.screenshot({ path: path.join(shots, "explore_decision.png") });
      }
      await press("ArrowRight");
    }
    eq(seen.length, expected[v].length, `k=2 ${v}: asks of P shown`);
    for (let i = 0; i < Math.min(seen.length, expected[v].length); i++) {
      eq(seen[i].len, expected[v][i].len, `k=2 ${v} ask ${i} (${expected[v][i].name}): len(sys.meta_path)`);
      eq(seen[i].name, expected[v][i].name, `k=2 ${v} ask ${i}: name`);
      eq(seen[i].reason, expected[v][i].reason, `k=2 ${v} ask ${i}: reason`);
    }
    // at the end: the run's totals, as `impsim run --json` reports them
    await press("End");
    const end = await shown(v);
    const r = json.runs.find((x) => x.variant === v);
    for (const c of Object.keys(end.counters)) eq(end.counters[c], r.counters[c], `k=2 ${v} end: ${c}`);
    eq(end.metaPath, 3 + r.outcome.proxy_copies, `k=2 ${v} end: len(sys.meta_path)`);
    // ... and the text trace's totals line
    const totals = text.split("== variant " + v)[1].match(/totals: ([\d,]+) asks? of P, ([\d,]+) suppressed/);
    eq(end.counters.asks, num(totals[1]), `k=2 ${v} end: asks vs the trace's totals`);
    eq(end.counters.suppressed, num(totals[2]), `k=2 ${v} end: suppressed vs the trace's totals`);
  }
  await page.screenshot({ path: path.join(shots, "explore_k2_end.png") });
}

// --- 2. the seed incident (k = 7): size, load time, labelled steps in step, the probe's counters ---
{
  const file = path.join(work, "incident.html");
  run("explore", "scenarios/seed_incident.json", "-o", file);
  const bytes = fs.statSync(file).size;
  const json = JSON.parse(run("run", "scenarios/seed_incident.json", "--json"));
  const t = await open(file);
  console.log(`seed incident page: ${(bytes / 1e6).toFixed(2)} MB; interactive after ${t.wall} ms ` +
              `(navigation to ready), its script ran ${Math.round(t.script)} ms`);
  check(bytes < 5e6, `seed incident page is ${bytes} bytes, over 5 MB`);
  await focus("before");
  await press("Home");
  await page.screenshot({ path: path.join(shots, "explore_incident_start.png") });
  // n: the labelled step "probe", both sides kept in step
  await press("n");
  const b = await shown("before"), a = await shown("after");
  check(/^step \S+ begins: importlib\.util\.find_spec\('pkg\.missing'\)/.test(b.event), `incident: n lands on the probe (${b.event})`);
  eq(a.event, b.event, "incident: the other side is kept in step at the labelled step");
  await page.screenshot({ path: path.join(shots, "explore_incident_probe.png") });
  for (const v of ["before", "after"]) {
    await focus(v);
    await press("Home");
    await press("n");
    const start = await shown(v);
    await press("e");  // to the probe's end
    const end = await shown(v);
    eq(end.kind, "S", `incident ${v}: e goes to the step's end`);
    const r = json.runs.find((x) => x.variant === v);
    for (const c of ["asks", "suppressed", "lookups", "toggles", "walks", "comparisons"])
      eq(end.counters[c] - start.counters[c], r.labels.probe[c], `incident ${v}: probe.${c}`);
    await press("End");
    const fin = await shown(v);
    for (const c of Object.keys(fin.counters)) eq(fin.counters[c], r.counters[c], `incident ${v} end: ${c}`);
    eq(fin.metaPath, 3 + r.outcome.proxy_copies, `incident ${v} end: len(sys.meta_path)`);
  }
  // the page says what it folded or cut, and its rows account for every event
  for (const v of ["before", "after"]) {
    const notes = await pane(v).locator("[data-field=notes]").innerText();
    check(!/INCONSISTENT/.test(notes), `incident ${v}: ${notes}`);
    if (v === "before") check(/folded|cut/.test(notes), `incident: the page states its folds or cuts (${notes})`);
  }
  // search: a module name finds rows, Enter jumps to one naming it
  await page.locator("#search").fill("pkg.missing");
  await focus("before");
  await page.locator("#search").focus();
  await page.keyboard.press("Enter");
  const hit = await shown("before");
  check(/pkg\.missing/.test(hit.event), `incident: search jumps to an event naming pkg.missing (${hit.event})`);
  await page.screenshot({ path: path.join(shots, "explore_incident_search.png") });
  // a fold opens its first occurrence
  await page.locator("#search").fill("");
  await focus("before");
  await press("Home");
  let fold = null;
  for (let i = 0; i < 4000 && !fold; i += 1) {
    const s = await shown("before");
    if (s.kind === "F") fold = s;
    else await press("ArrowRight");
  }
  if (fold) {
    await press("o");
    const orig = await shown("before");
    check(orig.row < fold.row, `incident: o opens the fold's first occurrence (row ${orig.row} < ${fold.row})`);
    await page.screenshot({ path: path.join(shots, "explore_incident_fold.png") });
  }
}

// --- 3. a hook scenario (the zoo's distutils_hack_nested, no folding): at every ask, sys.meta_path as
// the list of finder objects, the loop's index and the object asked, against `impsim trace`; the end's
// counters and sys.meta_path against `impsim run --json` ----------------------------------------------
{
  const scenario = "scenarios/zoo/distutils_hack_nested.json";
  const file = path.join(work, "zoo.html");
  run("explore", scenario, "--no-fold", "-o", file);
  const text = run("trace", scenario, "--max-lines", "0");
  const json = JSON.parse(run("run", scenario, "--json"));
  const expected = {};
  let variant = null;
  for (const line of text.split("\n")) {
    const v = line.match(/^== variant (\S+)/);
    if (v) { variant = v[1]; expected[variant] = []; continue; }
    const m = line.match(/ask i=(\d+) (\[[^\]]*\]): (\S+)\.find_spec\('([^']*)'\)/);
    if (m) expected[variant].push({ mp: m[2], who: m[3], name: m[4] });
  }
  await open(file);
  const variants = json.runs.map((r) => r.variant);
  eq(variants.join(" "), Object.keys(expected).join(" "), "zoo: the trace's variants");
  for (const v of variants) {
    await focus(v);
    await press("Home");
    const seen = [];
    let last = -1, shot = false;
    for (;;) {
      const p = pane(v);
      const row = num(await p.getAttribute("data-row"));
      if (row === last) break;
      last = row;
      if ((await p.getAttribute("data-kind")) === "a") {
        const event = await p.locator("[data-field=event]").innerText();
        const m = event.match(/sys\.meta_path\[(\d+)\] = (\S+)\.find_spec\('([^']*)'\)/);
        const mp = await p.locator(".muted[data-len]").getAttribute("data-mp");
        const ids = await p.locator("[data-field=meta_path] .finder").evaluateAll((es) => es.map((e) => e.dataset.id));
        // the drawn entries are the list the text names, and the starred one is the one asked
        eq("[" + ids.join(" ") + "]", mp.replace("*", ""), `zoo ${v} row ${row}: drawn entries vs data-mp`);
        seen.push({ mp, who: m ? m[2] : null, name: m ? m[3] : null, index: m ? num(m[1]) : -1 });
        if (!shot && v === "as_is" && ids.filter((x) => x === "dh").length === 2 && seen.length > 8) {
          shot = true;
          await page.screenshot({ path: path.join(shots, "explore_hooks_nested.png") });
        }
      }
      await press("ArrowRight");
    }
    eq(seen.length, expected[v].length, `zoo ${v}: asks shown`);
    for (let i = 0; i < Math.min(seen.length, expected[v].length); i++) {
      const e = expected[v][i], s = seen[i];
      eq(s.mp, e.mp, `zoo ${v} ask ${i} (${e.who}.find_spec('${e.name}')): sys.meta_path`);
      eq(s.who, e.who, `zoo ${v} ask ${i}: the object asked`);
      eq(s.name, e.name, `zoo ${v} ask ${i}: the name`);
      eq(e.mp.replace(/[\[\]]/g, "").split(" ")[s.index], "*" + s.who, `zoo ${v} ask ${i}: the loop's index`);
    }
    await press("End");
    const r = json.runs.find((x) => x.variant === v);
    const p = pane(v);
    for (const c of ["searches", "finder_calls", "max_depth", "lookup_depth"])
      eq(num(await p.locator(`[data-counter=${c}]`).innerText()), r.counters[c], `zoo ${v} end: ${c}`);
    for (const id of Object.keys(r.finder_calls_by_object))
      eq(num(await p.locator(`[data-counter="finder_calls:${id}"]`).innerText()), r.finder_calls_by_object[id],
         `zoo ${v} end: finder_calls:${id}`);
    const ids = await p.locator("[data-field=meta_path] .finder").evaluateAll((es) => es.map((e) => e.dataset.id));
    eq(ids.join(" "), r.outcome.meta_path.join(" "), `zoo ${v} end: sys.meta_path`);
    const notes = await p.locator("[data-field=notes]").innerText();
    check(!/INCONSISTENT/.test(notes), `zoo ${v}: ${notes}`);
  }
}

// --- 4. a hook with a reentrancy guard (ddtrace's process-global _finding): the page shows what the guard
// holds while a watchdog's re-entry runs, and nothing once it is done -------------------------------------
{
  const scenario = "scenarios/zoo/ddtrace_watchdog.json";
  const file = path.join(work, "guard.html");
  run("explore", scenario, "--no-fold", "-o", file);
  await open(file);
  const v = JSON.parse(run("run", scenario, "--json")).runs[0].variant;
  await focus(v);
  await press("Home");
  let held = null, last = -1;
  for (;;) {
    const p = pane(v);
    const row = num(await p.getAttribute("data-row"));
    if (row === last) break;
    last = row;
    const g = await p.locator("[data-field=guards]").innerText();
    if (!held && /^global_set \{/.test(g)) {
      held = g;
      await page.screenshot({ path: path.join(shots, "explore_hooks_guard.png") });
    }
    await press("ArrowRight");
  }
  check(held !== null, "ddtrace_watchdog: the page shows the global _finding set holding a name during a re-entry");
  const g = await pane(v).locator("[data-field=guards]").innerText();
  check(/^nothing/.test(g), `ddtrace_watchdog end: no guard holds anything (${g})`);
}

// --- 5. hostile strings: a name and a description that would end the data script or merge it with the
// viewer's (only "</" was escaped once, and "<!--<script>" left a page that rendered nothing), a label
// with U+2028. The page still runs, runs nothing of the scenario's, and shows the strings as written.
{
  const scenario = path.join(work, "hostile.json");
  const name = "<!--<script>";
  const description = "</script><script>window.pwned = 1</script><!-- \u2028 -->";
  fs.writeFileSync(scenario, JSON.stringify({
    impsim: 1, name, description, tree: { pkg: {} },
    program: [{ import: "pkg", label: "<!--\u2028<SCRIPT>" }],
  }));
  const file = path.join(work, "hostile.html");
  run("explore", scenario, "-o", file);
  await open(file);
  eq(await page.evaluate(() => document.scripts.length), 2, "hostile names: the page's script elements");
  eq(await page.evaluate(() => typeof window.pwned), "undefined", "hostile names: a script of the scenario's ran");
  eq(await page.locator("#title").innerText(), "impsim explore: " + name, "hostile names: the title");
  eq(await page.locator("#subtitle").innerText(), description, "hostile names: the description");
}

// --- 6. a page a teacher can drive and a student can read: frames numbered from the outermost at any
// depth, a deep stack folded in the middle with the count it hides, clicker keys and on-screen buttons
// that step one row, the other side kept in the same step of the program, a "why" for every row (never
// a hook's guard state for the interpreter's own finders), a legend for the strip, tooltips, and
// counters that stay whole on a three-variant page 1400 px wide ------------------------------------------
{
  const row = async (v) => num(await pane(v).getAttribute("data-row"));
  const frames = async (v) => pane(v).locator("[data-field=stack] li[data-frame]").evaluateAll(
    (lis) => lis.map((li) => ({ n: Number(li.dataset.frame), text: li.innerText })));
  // The incident's deepest row, and how deep it is, from the page's own data.
  const file = path.join(work, "incident_deep.html");
  run("explore", "scenarios/seed_incident.json", "--no-fold", "-o", file);
  await open(file);
  const v = await page.evaluate(() => DATA.variants[0].name);
  const deepest = await page.evaluate(() => {
    let depth = 0, best = 0, at = 0;
    DATA.variants[0].rows.forEach((r, i) => {
      if ("siaglb".includes(r[0])) depth++;
      if (depth > best) { best = depth; at = i; }
      if ("SIAGLB".includes(r[0])) depth--;
    });
    return { depth: best, row: at };
  });
  check(deepest.depth >= 20, `seed_incident: a stack ${deepest.depth} deep to fold`);
  await focus(v);
  await press("Home");
  await press("PageDown", 3);
  eq(await row(v), 3, "PageDown (a clicker's next) steps one row");
  await press("PageUp");
  eq(await row(v), 2, "PageUp (a clicker's back) steps one row");
  await page.keyboard.press("Shift+PageDown");
  eq(await row(v), 102, "Shift+PageDown jumps 100 rows");
  await press("Home");
  await press("ArrowRight", deepest.row);
  eq(await row(v), deepest.row, "at the incident's deepest row");
  const shown = await frames(v);
  const n = deepest.depth;
  eq(shown.map((f) => f.n).join(","), [1, 2, ...Array.from({ length: 8 }, (_, j) => n - 7 + j)].join(","),
     "a deep stack: the two outermost and eight innermost frames, numbered from the outermost");
  for (const f of shown) check(f.text.startsWith(f.n + "."), `frame ${f.n} reads "${f.text.slice(0, 12)}"`);
  eq(await pane(v).locator("[data-field=hidden-frames]").innerText(), `\u22ee frames 3\u2013${n - 8} hidden (${n - 10}): click to show`,
     "the hidden frames are said, with their numbers and count");
  await pane(v).locator("[data-field=hidden-frames]").click();
  eq((await frames(v)).map((f) => f.n).join(","), Array.from({ length: n }, (_, j) => j + 1).join(","),
     "opened: every frame, 1 to the innermost");
  // The buttons act on the active side as the keys do.
  const at = await row(v);
  await page.locator("#controls [data-action=next]").click();
  eq(await row(v), at + 1, "the next button");
  await page.locator("#controls [data-action=back]").click();
  eq(await row(v), at, "the back button");
  await page.locator("#controls [data-action=caller]").click();
  check(await row(v) < at, "the caller button goes to the enclosing call");
  await page.locator("#controls [data-action=start]").click();
  eq(await row(v), 0, "the start button");
  // Both sides in the same step of the program, row by row.
  const other = await page.evaluate(() => DATA.variants[1].name);
  let apart = 0;
  for (let i = 0; i < 120; i++) {
    const mine = await pane(v).getAttribute("data-step");
    const theirs = await pane(other).getAttribute("data-step");
    if (mine && theirs !== mine) apart++;
    await press("ArrowRight");
  }
  eq(apart, 0, "the other side stays in the active side's step of the program");
  check((await pane(v).locator("[data-field=legend] span").count()) === 4, "the strip has a legend of its four marks");
  check(/cost model/.test(await pane(v).locator("td[title]", { hasText: "comparisons" }).getAttribute("title")),
        "a counter's name says what it counts");
}
{
  await page.setViewportSize({ width: 1400, height: 980 });
  const scenario = "scenarios/zoo/ddtrace_watchdog.json";
  const file = path.join(work, "watchdog_why.html");
  run("explore", scenario, "--no-fold", "-o", file);
  await open(file);
  const variants = await page.evaluate(() => DATA.variants.map((v) => v.name));
  eq(variants.length, 3, "ddtrace_watchdog: a three-variant page");
  const v = variants[0];
  await focus(v);
  await press("Home");
  let last = -1, rows = 0;
  const events = [];
  for (;;) {
    const r = num(await pane(v).getAttribute("data-row"));
    if (r === last) break;
    last = r;
    rows++;
    const why = (await pane(v).locator(".reason").innerText()).trim();
    const event = await pane(v).locator("[data-field=event]").innerText();
    events.push(event + " | " + why);
    check(why !== "", `ddtrace_watchdog row ${r} (${event}): the why band says something`);
    if (/(Builtin|Frozen)Importer|PathFinder/.test(event.split(".find_spec")[0]) && /^sys\.meta_path|asks/.test(event))
      check(!/reentrancy guards/.test(why), `row ${r}: the interpreter's finder is not explained by a hook's guard (${why})`);
    await press("ArrowRight");
  }
  check(rows > 100, `ddtrace_watchdog: walked ${rows} rows`);
  // A hook's decisions and re-entries are rows of their own, as P's decisions are, with their reasons.
  check(events.some((e) => /^wd#6 decides: claimed: the hook runs its actions \| why \(wd#6's decision\)/.test(e)),
        "ddtrace_watchdog: a watchdog's decision to act, and why");
  check(events.some((e) => /^wd#\d decides: a re-entry, turned away: the guard's set already holds this name/.test(e)),
        "ddtrace_watchdog: a re-entry turned away by the guard, and why");
  check(events.some((e) => /^wd#6 re-enters the import system: importlib\.util\.find_spec\('app'\)/.test(e)),
        "ddtrace_watchdog: the re-entry is a row of its own");
  for (const w of variants) {
    // The lines a value's text is laid out on (a name beside it may take two).
    const lines = await pane(w).locator("td.v").evaluateAll((tds) => tds.map((td) => {
      const range = document.createRange();
      range.selectNodeContents(td);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    }));
    check(lines.length > 8 && lines.every((n) => n === 1), `${w} at 1400 px: every counter value on one line (${lines})`);
  }
  // The page as a projector shows it (docs/tutorial.md): at the first watchdog's re-entry, 1400 px and 1024 px wide.
  await eachRow(v, async (p, event) => /^wd#6 re-enters the import system/.test(event));
  for (const width of [1400, 1024]) {
    await page.setViewportSize({ width, height: 900 });
    for (const w of variants) {
      const lines = await pane(w).locator("td.v").evaluateAll((tds) => tds.map((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
      }));
      check(lines.every((n) => n === 1), `${w} at ${width} px: every counter value on one line (${lines})`);
      // The call stack wraps at spaces and after "." "(" "," "/", never inside a
      // piece that would fit on a line of its own.
      const broken = await pane(w).locator("[data-field=stack] li").evaluateAll((lis) => {
        const out = [];
        for (const li of lis)
          for (const node of li.childNodes) {
            if (node.nodeType !== Node.TEXT_NODE) continue;
            for (const m of node.data.matchAll(/\S+/g)) {
              const r = document.createRange();
              r.setStart(node, m.index);
              r.setEnd(node, m.index + m[0].length);
              const rects = [...r.getClientRects()];
              const tops = new Set(rects.map((x) => Math.round(x.top)));
              const width = rects.reduce((sum, x) => sum + x.width, 0);
              if (tops.size > 1 && width < li.clientWidth) out.push(m[0]);
            }
          }
        return out;
      });
      check(broken.length === 0, `${w} at ${width} px: no piece of a call-stack frame wraps mid-word (${broken})`);
    }
    await page.screenshot({ path: path.join(shots, `explore_hooks_${width}.png`) });
  }
  await page.setViewportSize({ width: 1500, height: 980 });
}

// --- 7. a threaded scenario that hangs (a module body joins a thread that waits for that module's lock):
// every row says whose thread it is (a step of /threads/w/ is w's, of /program/ main's), the stack shown is
// that thread's with the others' beside it, each with what it waits for, and the page says the program
// hangs and on what. A thread named by the scenario is shown as named; a hostile description
// runs nothing.
{
  const scenario = path.join(work, "threads.json");
  const data = JSON.parse(fs.readFileSync(path.join(root, "tests/data/threads/join_in_body.json"), "utf8"));
  const worker = "worker_2";
  data.threads = { [worker]: data.threads.w };
  data.program = data.program.map((s) => (s.start ? { start: worker } : s));
  data.tree.a.body = [{ join: worker }];
  data.description = "</script><script>window.pwned = 1</script>";
  fs.writeFileSync(scenario, JSON.stringify(data));
  const file = path.join(work, "threads.html");
  try { run("explore", scenario, "--variant", "before", "-o", file); } catch (e) { /* exit 1 or 3 is a page too */ }
  await open(file);
  eq(await page.evaluate(() => typeof window.pwned), "undefined", "threads: a script of the scenario's ran");
  const v = "before";
  await focus(v);
  await press("Home");
  let last = -1, rows = 0, steps = 0;
  const waitWhys = [];
  for (;;) {
    const p = pane(v);
    const r = num(await p.getAttribute("data-row"));
    if (r === last) break;
    last = r;
    rows++;
    const thread = await p.getAttribute("data-thread");
    check((await p.locator("[data-field=thread]").innerText()).startsWith("thread " + thread),
          `threads row ${r}: the thread line names ${thread}`);
    const event = await p.locator("[data-field=event]").innerText();
    if (event.includes(" waits for ")) waitWhys.push([event, await p.locator("[data-field=reason]").innerText()]);
    const m = event.match(/^step \/(program|threads\/([^/]+))\//);
    if (m) {
      steps++;
      eq(thread, m[2] || "main", `threads row ${r} (${event}): whose step`);
    }
    eq(await p.locator(".box h3").first().innerText(), `CALL STACK OF THREAD ${thread.toUpperCase()} (OUTERMOST FIRST)`,
       `threads row ${r}: the stack's title`);
    await press("ArrowRight");
  }
  check(rows > 10 && steps >= 3, `threads: walked ${rows} rows, ${steps} steps`);
  // Each wait's why is its own kind's: the join is outside the deadlock
  // check as a join, the module lock inside it.
  const joinWhy = waitWhys.find(([e]) => e.includes(".join()"));
  check(joinWhy && joinWhy[1].includes("a cycle through a join never ends") && !joinWhy[1].includes("global import lock"),
        `threads: the join's why (${JSON.stringify(joinWhy)})`);
  const lockWhy = waitWhys.find(([e]) => e.includes("_ModuleLock('a')"));
  check(lockWhy && lockWhy[1].includes("_blocking_on") && !lockWhy[1].startsWith("another thread holds what"),
        `threads: the module lock's why (${JSON.stringify(lockWhy)})`);
  // At the end: the hang, each thread's wait on top of its stack or in the others' list.
  const p = pane(v);
  const notes = await p.locator("[data-field=notes]").innerText();
  check(notes.includes("the program hangs (it would never end): thread main waits for thread " + worker + " to finish (join)"),
        `threads: the notes say the program hangs and on what (${notes})`);
  const others = await p.locator("[data-field=other-threads] summary").allInnerTexts();
  const top = await p.locator("[data-field=stack] li.top").innerText();
  const thread = await p.getAttribute("data-thread");
  const waits = [top.replace(/^\d+\./, "thread " + thread + ": "), ...others].join("\n");
  check(waits.includes("thread main: waits for " + worker + " to finish (" + worker + ".join())"),
        `threads: main's wait is shown (${waits})`);
  check(waits.includes("thread " + worker + ": waits for _ModuleLock('a'), held by main"),
        `threads: ${worker}'s wait is shown (${waits})`);
  const totals = await p.locator("[data-field=totals]").innerText();
  check(totals.includes("threads: main: waiting, " + worker + ": waiting"), `threads: the totals say how each ended (${totals})`);
  await page.screenshot({ path: path.join(shots, "explore_threads_hang.png") });
}

// --- A served loader's create_module (pyximport's build): the page says whose loader runs, that the module
// is not in sys.modules yet, and each row up to where it ends has a why (every row of a hook page:
// ddtrace_watchdog's walk above).
{
  const scenario = "tests/data/hooks/serve_create_module.json";
  const file = path.join(work, "create_module.html");
  run("explore", scenario, "--no-fold", "-o", file);
  await open(file);
  const v = (await page.evaluate(() => DATA.variants.map((x) => x.name)))[0];
  await focus(v);
  await press("Home");
  let last = -1;
  const events = [];
  for (;;) {
    const r = num(await pane(v).getAttribute("data-row"));
    if (r === last) break;
    last = r;
    const why = (await pane(v).locator(".reason").innerText()).trim();
    const event = await pane(v).locator("[data-field=event]").innerText();
    events.push(event + " | " + why);
    check(why !== "", `serve_create_module row ${r} (${event}): the why band says something`);
    if (/^create_module for built ends/.test(event)) break;
    await press("ArrowRight");
  }
  check(events.some((e) => /^the loader's create_module for built runs \| .*built is not in sys\.modules until it returns/.test(e)),
        "serve_create_module: the loader's create_module is a row of its own, and why it matters");
  check(events.some((e) => /^create_module for built ends/.test(e)), "serve_create_module: and where it ends");
}

// --- 8. virtualenv's deadlock, no threads (the zoo's virtualenv_same_class): stepping to the end passes each
// acquire and release of the hook's lock, in `impsim trace`'s order and words, and stops on main's wait for
// the lock it holds: the event, the why, the stack (both objects' asks, the wait on top) and the notes.
{
  const scenario = "scenarios/zoo/virtualenv_same_class.json";
  const file = path.join(work, "venv.html");
  const output = (...args) => { try { return run(...args); } catch (e) { return e.stdout.toString(); } };
  output("explore", scenario, "-o", file);  // a hang exits 1; the page is written
  const locks = output("trace", scenario, "--max-lines", "0").split("\n")
    .map((l) => l.trim()).filter((l) => / (acquires|releases) the threading\.Lock /.test(l));
  // run sweeps `extra` (0 objects added: no hang); explore and trace take its default, 1.
  const ran = JSON.parse(output("run", scenario, "--json")).runs.find((r) => r.params.extra === 1);
  const v = ran.variant;
  await open(file);
  await focus(v);
  await press("Home");
  const seen = [];
  let last = -1, event = "";
  for (;;) {
    const r = num(await pane(v).getAttribute("data-row"));
    if (r === last) break;
    last = r;
    event = await pane(v).locator("[data-field=event]").innerText();
    if (/ (acquires|releases) the threading\.Lock /.test(event)) seen.push(event);
    await press("ArrowRight");
  }
  check(locks.length >= 2, `venv: the trace lists ${locks.length} lock lines`);
  eq(seen.join("\n"), locks.join("\n"), "venv: the page's acquire and release rows against the trace's");
  const p = pane(v);
  eq(event, "main waits for the threading.Lock of class virtualenv, held by main", "venv: the last row");
  const reason = await p.locator("[data-field=reason]").innerText();
  check(reason.includes("held already (by this very thread)"), `venv: the why of the wait (${reason})`);
  const stack = await p.locator("[data-field=stack] li").allInnerTexts();
  const top = stack[stack.length - 1] || "";
  check(top.endsWith("waits for the threading.Lock of class virtualenv, held by main"), `venv: the stack's top (${top})`);
  const asks = stack.filter((f) => f.includes(".find_spec('distutils.dist')"));
  check(asks.length === 2 && asks[0].includes("i=0 \u2192 venv#1.find_spec") && asks[1].includes("i=1 \u2192 venv.find_spec"),
        `venv: the stack holds venv#1's ask and, inside it, venv's (${asks.join(" | ")})`);
  eq(await p.getAttribute("data-thread"), "main", "venv: the thread");
  const notes = await p.locator("[data-field=notes]").innerText();
  const hang = "thread main waits for the threading.Lock of class virtualenv, held by thread main";
  eq(ran.outcome.hang.join("; "), hang, "venv: run --json's hang");
  check(notes.includes("the program hangs (it would never end): " + hang), `venv: the notes say the hang (${notes})`);
  const totals = await p.locator("[data-field=totals]").innerText();
  check(totals.includes("threads: main: waiting"), `venv: the totals say main waits (${totals})`);
  await page.screenshot({ path: path.join(shots, "explore_virtualenv_hang.png") });
  // The threaded tests/data/threads/hook_lock.json on its hanging schedule: main waits for the class's Lock
  // it holds (f2's re-entry asks f1) while w, done, runs no step.
  const threaded = path.join(work, "hook_lock.html");
  output("explore", "tests/data/threads/hook_lock.json", "--schedule", "1.1", "-o", threaded);
  await open(threaded);
  await focus("as_is");
  await press("End");
  const q = pane("as_is");
  eq(await q.locator("[data-field=event]").innerText(), "main waits for the threading.Lock of class locked, held by main",
     "hook_lock: the last row");
  const qstack = await q.locator("[data-field=stack] li").allInnerTexts();
  check((qstack[qstack.length - 1] || "").endsWith("waits for the threading.Lock of class locked, held by main"),
        `hook_lock: the stack's top (${qstack.join(" | ")})`);
  eq((await q.locator("[data-field=other-threads] summary").allInnerTexts()).join("; "), "thread w: not running a step",
     "hook_lock: w's state");
  check((await q.locator("[data-field=notes]").innerText()).includes(
          "the program hangs (it would never end): thread main waits for the threading.Lock of class locked, held by thread main"),
        "hook_lock: the notes say the hang");
}

// --- 9. a _DeadlockError (tests/data/threads/cross_import.json, a schedule where main's import of b would
// wait for w, which waits for a, held by main): a row of its own, in `impsim trace`'s words, with a why.
{
  const schedule = "0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0";
  const output = (...args) => { try { return run(...args); } catch (e) { return e.stdout.toString(); } };
  const file = path.join(work, "deadlock.html");
  output("explore", "tests/data/threads/cross_import.json", "--variant", "before", "--schedule", schedule, "-o", file);
  const line = output("trace", "tests/data/threads/cross_import.json", "--variant", "before", "--schedule", schedule)
    .split("\n").find((l) => l.includes("_DeadlockError ("));
  check(line !== undefined, "deadlock: the trace has a _DeadlockError line");
  const [who, said] = (line || "|").split("|").map((x) => x.trim());
  await open(file);
  let found = "";
  await eachRow("before", async (p, event) => {
    if (!event.includes("_DeadlockError (")) return false;
    found = event;
    const reason = await p.locator("[data-field=reason]").innerText();
    check(reason.includes("_blocking_on") && reason.includes("_DeadlockError instead of waiting"),
          `deadlock: the why (${reason})`);
    eq(await p.getAttribute("data-thread"), who, "deadlock: the thread that raises");
    return true;
  });
  eq(found, who + ": " + said, "deadlock: the row against the trace's line");
}

// --- 10. an ask of a finder read before the global import lock (tests/data/threads/guard_sets.json, a
// schedule where w reads BuiltinImporter at index 2 while main's loader has `server` out of sys.meta_path,
// and asks it once `server` is back there): the row names the finder asked, says why it is not the one
// drawn at its index, and the strip marks no entry as that loop's.
{
  const schedule = "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.0.0.0.0.0.0.0";
  const file = path.join(work, "read_before_lock.html");
  run("explore", "tests/data/threads/guard_sets.json", "--variant", "as_is", "--schedule", schedule, "-o", file);
  const line = run("trace", "tests/data/threads/guard_sets.json", "--variant", "as_is", "--schedule", schedule)
    .split("\n").find((l) => l.includes(" was read at i="));
  check(line !== undefined, "read before the lock: the trace has the ask's note");
  const note = ((line || "").match(/\] \(([^)]*)\): /) || [])[1];
  await open(file);
  let found = false;
  await eachRow("as_is", async (p, event) => {
    if (!event.includes(" was read at i=")) return false;
    found = true;
    eq(event, "_find_spec asks sys.meta_path[2] = BuiltinImporter.find_spec('x') (loop over 6 finders); " + note,
       "read before the lock: the event");
    eq(await p.locator("[data-field=reason]").innerText(), note, "read before the lock: the why");
    eq(await p.getAttribute("data-thread"), "w", "read before the lock: w's row");
    const mp = await p.locator(".muted[data-len]").getAttribute("data-mp");
    eq(mp, "[wd1 wd2 server BuiltinImporter FrozenImporter PathFinder]", "read before the lock: the list, nothing starred");
    eq(await p.locator("[data-field=meta_path] .finder.asked").count(), 0, "read before the lock: no entry marked asked");
    return true;
  });
  check(found, "read before the lock: the page has the ask");
}

// --- 11. a hook lock taken outside find_spec (the zoo's wrapt_notify_lock on its hanging schedule): the
// install's and the wrapped loader's acquire and release rows say where the lock is taken, in `impsim
// trace`'s order and words, each with a why that names the place; the page ends on the hang's two waits.
{
  const scenario = "scenarios/zoo/wrapt_notify_lock.json";
  const schedule = "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1";
  const output = (...args) => { try { return run(...args); } catch (e) { return e.stdout.toString(); } };
  const file = path.join(work, "wrapt.html");
  output("explore", scenario, "--variant", "as_is", "--schedule", schedule, "-o", file);
  const locks = output("trace", scenario, "--variant", "as_is", "--schedule", schedule).split("\n")
    .filter((l) => / (acquires|releases) the threading\.RLock /.test(l)).map((l) => l.split("|")[1].trim());
  await open(file);
  const seen = [], whys = {};
  await eachRow("as_is", async (p, event) => {
    if (!/ (acquires|releases) the threading\.RLock /.test(event)) return false;
    seen.push(event);
    if (event.includes(" acquires ")) whys[event] = await p.locator("[data-field=reason]").innerText();
    return false;
  });
  check(locks.length === 4, `wrapt: the trace lists ${locks.length} lock lines`);
  eq(seen.join("\n"), locks.join("\n"), "wrapt: the page's acquire and release rows against the trace's");
  const install = whys["wr acquires the threading.RLock of class wrapt (install)"] || "";
  check(install.includes("register_post_import_hook"), `wrapt: the why of the install's acquire (${install})`);
  const after = whys["wr acquires the threading.RLock of class wrapt (after exec_module('target'))"] || "";
  check(after.includes("notify_module_loaded"), `wrapt: the why of the loader's acquire (${after})`);
  const notes = await pane("as_is").locator("[data-field=notes]").innerText();
  for (const wait of ["thread main waits for the module lock of dep, held by thread w",
                      "thread w waits for the threading.RLock of class wrapt, held by thread main"])
    check(notes.includes(wait), `wrapt: the notes say "${wait}" (${notes})`);
}

// --- 13. PEP 810 (scenarios/lazy/guards_then_first_use.json, k = 2): the lazy statement and the first read
// that resolves it are rows apart, each labelled lazy with `impsim trace`'s sentence as its why, and pkg's
// import runs inside the resolution: its rows have the resolution's frame on their call stack.
{
  const scenario = "scenarios/lazy/guards_then_first_use.json";
  const file = path.join(work, "lazy.html");
  run("explore", scenario, "--set", "k=2", "-o", file);
  const text = run("trace", scenario, "--set", "k=2");
  await open(file);
  for (const v of ["before", "after"]) {
    const section = text.split("== variant " + v)[1].split("== variant ")[0];
    const said = section.split("\n").map((l) => l.trim()).filter((l) => /^(no search now|resolved here)/.test(l));
    const seen = [];
    let inside = null;
    await eachRow(v, async (p, event) => {
      const kind = await p.getAttribute("data-kind");
      if (seen.length && seen[seen.length - 1].kind === "z" && inside === null) {
        inside = { event, frames: await p.locator("[data-field=stack] li.lazy").allInnerTexts() };
        if (v === "before") await page.screenshot({ path: path.join(shots, "explore_lazy_resolution.png") });
      }
      if (!["y", "z", "Z"].includes(kind)) return false;
      seen.push({ kind, event, why: (await p.locator(".reason").innerText()).trim() });
      return kind === "Z";
    });
    eq(seen.map((s) => s.kind).join(" "), "y z Z", `lazy ${v}: the statement's row, then the resolution's, then its end`);
    eq(said.length, 2, `lazy ${v}: the trace's lines for the statement and the resolution`);
    if (seen.length !== 3 || said.length !== 2) continue;
    eq(seen[0].event, "lazy: statement bound ('pkg')", `lazy ${v}: the statement's event`);
    eq(seen[0].why, "why (lazy: statement bound): " + said[0], `lazy ${v}: the statement's why is the trace's line`);
    eq(seen[1].event, "lazy: resolution ('pkg')", `lazy ${v}: the resolution's event`);
    eq(seen[1].why, "why (lazy: resolution): " + said[1], `lazy ${v}: the resolution's why is the trace's line`);
    check(said[1].startsWith("resolved here, at the first read of `pkg`"), `lazy ${v}: the trace says where (${said[1]})`);
    eq(seen[2].event, "lazy: resolution ('pkg') ends", `lazy ${v}: the resolution's end`);
    check(inside !== null && /^import pkg: /.test(inside.event), `lazy ${v}: pkg's import follows the resolution (${inside && inside.event})`);
    eq(inside ? inside.frames.map((f) => f.replace(/^\d+\./, "")).join(" | ") : "", "lazy: resolution ('pkg')",
       `lazy ${v}: the import's call stack holds the resolution`);
  }
}

// --- 12. the tutorial's walk-through of the seed incident's first ten asks (docs/tutorial.md, between its
// first-asks markers), generated from what the page shows: each ask's event and why band, then the events
// up to the next ask. --figures writes it into the tutorial; otherwise the tutorial's text must be what
// the page shows now.
{
  const file = path.join(work, "incident_asks.html");
  run("explore", "scenarios/seed_incident.json", "--variant", "before", "-o", file);
  await open(file);
  // Each ask's rows run to the next ask, or to its own answer (an "A" row).
  const asks = [];
  let collecting = false;
  await eachRow("before", async (p, event) => {
    const kind = await p.getAttribute("data-kind");
    if (kind === "a") {
      if (asks.length === 10) return true;
      const why = (await p.locator("[data-field=reason]").innerText()).trim().replace(/\s+/g, " ");
      asks.push({ event: event.trim(), why, then: [] });
      collecting = true;
    } else if (collecting) {
      asks[asks.length - 1].then.push(event.trim());
      if (kind === "A") collecting = false;
    }
    return !collecting && asks.length === 10;
  });
  const begin = "<!-- first-asks: generated from the page by tests/browser/explore_test.mjs --figures; do not edit -->";
  const stop = "<!-- :first-asks -->";
  const text = [begin, ""].concat(asks.map((a, i) =>
    `${i + 1}. \`${a.event}\`  \n    *why:* ${a.why}  \n    *then:* ` + a.then.map((e) => `\`${e}\``).join("; "))).concat(["", stop]).join("\n");
  const tutorial = path.join(root, "docs", "tutorial.md");
  const doc = fs.readFileSync(tutorial, "utf8");
  const at = doc.indexOf(begin), to = doc.indexOf(stop);
  check(asks.length === 10, `first asks: the page has ${asks.length} of the ten`);
  check(at >= 0 && to > at, "first asks: docs/tutorial.md has the markers");
  if (figures && at >= 0 && to > at)
    fs.writeFileSync(tutorial, doc.slice(0, at) + text + doc.slice(to + stop.length));
  else
    eq(at >= 0 ? doc.slice(at, to + stop.length) : "", text,
       "first asks: docs/tutorial.md's walk-through is what the page shows (regenerate: tools/gen/make_tutorial_figures)");
}

check(network === 0, `the pages made ${network} network requests`);
await context.close();
fs.rmSync(work, { recursive: true, force: true });
fs.rmSync(profile, { recursive: true, force: true });
if (figures) {
  const dest = path.resolve(process.env.FIGURES || path.join(root, "docs", "figures"));
  for (const f of ["explore_decision.png", "explore_incident_probe.png", "explore_incident_fold.png", "explore_hooks_nested.png",
                   "explore_virtualenv_hang.png", "explore_hooks_1400.png", "explore_hooks_1024.png"])
    if (fs.existsSync(path.join(shots, f))) fs.copyFileSync(path.join(shots, f), path.join(dest, f));
}
console.log(`${checks - failures}/${checks} checks passed; screenshots in ${shots}`);
process.exit(failures ? 1 : 0);
