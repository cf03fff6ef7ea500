/**
 * The node options the gateway runs with: `npm start`, bin/paia-sip2.mjs,
 * the Dockerfile's CMD, deploy/paia-sip2.service and the bench all pass them
 * (test/unit/packaging.test.ts keeps them in step; docs/operations.md, "Memory").
 *
 * V8's defaults let the heap balloon under a burst of requests: the young
 * generation grows to 2 x 16 MB, the old one to several times what is live
 * before its next full collection, and both are given back only when V8's
 * memory reducer runs, seconds to minutes after the burst. Bounding the young
 * generation to 2 x 8 MB and letting the old one grow by 60 % of what is live
 * keeps the resident size close to what the gateway holds. Measured with the
 * bench (B4: 10,000 sessions and 10,000 cached items; B1: CPU per request):
 * 121 MB right after the load instead of 173-177 MB, the same 86-88 MB once
 * settled, for 5-10 % more CPU per request. --expose-gc gives the gateway
 * gc(), for one collection once it is idle after a burst (idle-trim.ts).
 * All three are V8 options node passes on; they exist in node 20, 22 and 24.
 */
export const GATEWAY_NODE_FLAGS: readonly string[] = Object.freeze([
  '--max-semi-space-size=8',
  '--heap-growing-percent=60',
  '--expose-gc',
]);

/** The flags of GATEWAY_NODE_FLAGS this process was started without (for a note in the log). */
export function missingNodeFlags(execArgv: readonly string[] = process.execArgv): string[] {
  return GATEWAY_NODE_FLAGS.filter((flag) => !execArgv.includes(flag));
}
