import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * The results table, the machine description and bench/RESULTS.md.
 */

export type Met = 'yes' | 'NO' | 'n/a' | 'INVALID';

export interface Row {
  /** "B1", "B2 baseline" ... */
  id: string;
  what: string;
  result: string;
  target: string;
  met: Met;
  /** Formulas, counters, error counts, side numbers: printed under the table. */
  notes: string[];
}

export function metOf(ok: boolean, valid = true): Met {
  if (!valid) return 'INVALID';
  return ok ? 'yes' : 'NO';
}

export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 100 ? `${value.toFixed(0)} ms` : value >= 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(2)} ms`;
}

export function perSecond(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value < 100 ? `${value.toFixed(1)}/s` : `${Math.round(value).toLocaleString('en-US')}/s`;
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function counts(record: Record<string, number>): string {
  const entries = Object.entries(record).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? 'none' : entries.map(([key, value]) => `${key}×${value}`).join(', ');
}

function osName(): string {
  try {
    const match = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (match) return `${match[1]} (${os.type()} ${os.release()} ${os.arch()})`;
  } catch {
    // not Linux
  }
  return `${os.type()} ${os.release()} ${os.arch()}`;
}

export function machine(): string[] {
  const cpus = os.cpus();
  return [
    `CPU: ${cpus[0]?.model.trim() ?? 'unknown'}, ${cpus.length} logical cores (os.availableParallelism ${os.availableParallelism()})`,
    `RAM: ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `Node: ${process.version}`,
    `OS: ${osName()}`,
    `Date: ${new Date().toISOString()}`,
  ];
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function table(rows: readonly Row[]): string[] {
  const header = ['bench', 'what', 'result', 'target', 'met'];
  const body = rows.map((row) => [row.id, row.what, row.result, row.target, row.met].map(cell));
  const widths = header.map((title, i) => Math.max(title.length, ...body.map((line) => line[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((text, i) => text.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)];
}

function notes(rows: readonly Row[]): string[] {
  const out: string[] = [];
  for (const row of rows) for (const note of row.notes) out.push(`- ${row.id}: ${note}`);
  return out;
}

export interface Report {
  command: string;
  machine: string[];
  rows: Row[];
  /** Run-wide notes (limits lifted, mode). */
  general: string[];
  runtimeS: number;
}

/** What goes both to the terminal and below the header of RESULTS.md. */
export function render(report: Report): string {
  return [
    `Command: \`${report.command}\``,
    '',
    ...report.machine.map((line) => `- ${line}`),
    '',
    ...table(report.rows),
    '',
    ...notes(report.rows),
    ...report.general.map((line) => `- ${line}`),
    `- total bench runtime: ${report.runtimeS.toFixed(0)} s`,
  ].join('\n');
}

const HEADER = `# Benchmark results

Written by \`npm run bench\` (bench/run.ts), the whole file on every full run.
All numbers below come from one run on one machine, and every ratio divides
two numbers measured in that run. Percentiles are nearest-rank over every
recorded latency. \`met\`: yes / NO against the target; n/a for rows
without a target; INVALID when the run had errors (non-200 answers, failed
logins, incomplete answers), whatever the number.

How each number is computed (more in bench/README.md):

- **B1 CPU per request** (target <= 2): gateway CPU seconds per translated
  request ÷ the raw relay's CPU seconds per request, both read from /proc
  (utime + stime of the serving process) over a measured window. Gateway:
  \`GET /core/PATRON\`, each of the 32 connections its own generated patron
  and token, so every request sends its own SIP2 63 (identical reads in
  flight at once share one round trip; the notes count the 63s against the
  answers), simulator at 0 ms, SIP2 pool 4. Reference: the raw relay
  (bench/relay-server.mjs raw: Hono, four plain SIP2 sockets, the 63
  encoded, the 64's name read by a regular expression), the floor of any
  HTTP-to-SIP2 relay on Hono and Node, answering the same requests over the
  same simulator. Same closed loop for both: 32 keep-alive HTTP connections
  (undici Pool, the next request as soon as the previous one answered).
  Three rounds, each a fresh hello-world (2 s warm-up + 4 s window), a fresh
  simulator + gateway (6 s warm-up, long enough for V8's JIT to settle, + 4 s
  window), then a fresh simulator + process of each of the gateway's layers,
  the raw relay first (the same warm-up and window); never two at once.
  Result = median(gateway µs/request) ÷ median(raw relay µs/request); beside
  it, for information, the gateway ÷ a bare Hono hello-world
  (bench/hello-server.ts). The notes give every process's value, their
  spread, the req/s and the layers.
- **B2 fan-out** (target <= 1.1): simulator answering every SIP2 message after
  20 ms, pool 8, item cache off. \`GET /core/dave/items\` (120 loans, 5 overdue)
  one call at a time, 12 calls after 2 warm-ups; p50. Floor = the messages the
  answer needs (bench/floor.ts): the charged list's first page alone (its 64
  carries the counts), then the rest 8 at a time: floor = (1 + ceil((L - 1 +
  D) / 8)) × RT, L = list requests needed (the charged pages, plus one per
  page of each other list whose count is not 0 and that the dialect does not
  count among the charged items), D = documents (one 17 each), RT = p50 of one
  63 sent straight to the simulator in the same run (its 20 ms wait plus what
  timers and scheduling add on this machine: a floor a client can reach).
  Result = p50 / floor. Baseline row: the same SIP2 messages sent naively over one
  connection, strictly one after another (p50 of 3 runs). Cached row: the same
  call against a gateway whose item cache is on and warm. Neither has a target.
- **B3 at low load** (target <= 2): one request at a time, simulator at 0 ms.
  p50 of \`GET /core/alice\` through the gateway ÷ p50 of the same 63
  sent straight to the simulator over one persistent SIP2 connection from the
  bench process (a ratio: both move with the machine); 10,000 warm-up calls
  each (a fresh gateway on Node 22 settles only after 6,000-7,000 calls one
  at a time; the notes give its warm-up curve), then 1000 samples each, the
  two alternating in batches of 100 with a third: the raw relay of B1
  answering the same call (row "B3 raw relay", for information: the floor
  of any HTTP-to-SIP2 relay on Hono and Node). The notes give the p50s and
  the gateway's difference in milliseconds.
- **B4 memory** (targets <= 120 MB right after the load, <= 100 MB settled): 10,000 patrons with
  one loan each = 10,000 distinct items (generated data), one login per
  patron whose token stays valid, then \`GET core\`, \`items\` and \`fees\`
  per patron (fills 10,000 item-cache entries, and the account window with
  10,000 patrons: \`PAIA_CACHE_ACCOUNTS_ENABLED=true\`, a 300 s window, room
  for 10,000). Result = VmRSS of the gateway process (/proc/PID/status) 1 s
  afterwards (B4), and again after 30 s without requests with the same
  sessions, cache entries and window entries live (B4 settled: V8 gives back
  heap grown during the burst only once allocation has calmed down; INVALID
  if the oldest reads had left the window by then). The notes show the
  window's entries and V8's heap used and allocated from /metrics.
- **B5 flow** (no target): 16 virtual patrons, each looping login, patron,
  items, fees, logout, over the demo patrons that can log in; HTTP requests/s
  and flows/s completed in a 10 s window after 2 s warm-up.
- **B7 at the floor** (target <= 1.1): a patron with 10 loans and nothing else
  (added to a copy of the demo data), simulator at 20 ms per message, pool 4,
  item cache off; \`GET /core/ten/items\` 40 times one at a time after 2
  warm-ups; p50 / floor, floor = (1 + ceil(10 / 4)) × RT (one 63, then three
  rounds of 17s; bench/floor.ts; RT as in B2). The notes give the round trips
  per call (p50 / RT) and the messages of one call. The "B7 messages" row:
  SIP2 messages (63 and 17, simulator /counters) of one GET items, and of the
  account view (patron + items + fees), for alice, dave and the 10-loan
  patron.
- **B8 a discovery system's visit** (targets: messages per visit = one
  complete read; p50 <= 1.1 × floor): VuFind's PAIA driver's calls for one
  visit to "My account", one after another: login, \`GET core\`, \`items\`
  three times, \`core\` twice more, \`fees\`; for alice, dave and the 10-loan
  patron, simulator at 20 ms per message, the gateway's defaults otherwise
  (pool as shipped, account window on as shipped, item cache on with its TTL
  set to the window's 5 s so that every visit starts cold). One row per
  patron. Messages per visit: simulator /counters over one visit, by code
  (the pool's own 93 and 99 left out), against one complete read (login,
  core, items, fees once each on a second gateway with nothing cached, same
  run). p50 of 6 cold visits (after one unmeasured) ÷ floor, floor = (1 login
  + 1 core + the items floor + 1 per round of fine pages) × RT (bench/floor.ts
  visitFloor; items floor and RT as in B2, with the gateway's pool); the
  repeated calls, served from the window, count no round trip.

The gateway's client limits (logins per second, requests per minute per
token, sessions per patron) are lifted for every bench gateway, as listed
below: they protect the ILS from clients and would otherwise turn a load test
into 429/503. The brute-force lockout stays as configured.

## Messages per call (issue 17)

SIP2 messages one call sends (simulator \`GET /counters\`, 63s and 17s, one
call at a time, generic dialect, item cache off), before (main at 7a302b6:
five list requests per items call, whatever the counts) and after (the
charged list first, then only lists whose count is not 0; identical reads of
concurrent calls shared). Reproduce "after" with \`node --import tsx bench/messages.ts\` after
\`npm run build\` (or the row "B7 messages" of \`npm run bench -- --only B7\`);
"before" with the same script in a built copy of 7a302b6 (see its comment).

| patron | GET items before | GET items after | patron + items + fees before | after |
|---|---|---|---|---|
| alice (3 loans, 1 overdue, a hold ready, a hold pending) | 10 (63×5, 17×5) | 9 (63×4, 17×5) | 12 | 11 |
| dave (120 loans, 5 overdue) | 127 (63×7, 17×120) | 124 (63×4, 17×120) | 129 | 126 |
| ten (10 loans, nothing else) | 15 (63×5, 17×10) | 11 (63×1, 17×10) | 17 | 13 |

With the koha, evergreen and folio dialects, which count overdue items among
the charged ones, alice's items cost 8 (63×3). Two identical GET items of
one patron at the same time now cost one set of these messages, not two.

## Messages per visit (issue 26)

SIP2 messages of one VuFind-like visit (B8: login, core, items three times,
core twice more, fees; simulator \`GET /counters\`, by code, shipped
defaults, item cache on), before (main at c830296: every core and items call
read the account again; the item cache spared the repeated 17s) and after
(the account window: a patron's reads shared for 5 s). "One complete read":
login, core, items and fees once each with nothing cached.

| patron | visit before | visit after | one complete read |
|---|---|---|---|
| alice | 22 (63×17, 17×5) | 12 (63×7, 17×5) | 12 |
| dave | 137 (63×17, 17×120) | 127 (63×7, 17×120) | 127 |
| ten | 18 (63×8, 17×10) | 14 (63×4, 17×10) | 14 |

---

`;

export function resultsFile(report: Report): string {
  return `${HEADER}${render(report)}\n`;
}
