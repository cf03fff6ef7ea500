/**
 * node --import tsx bench/messages.ts   (after npm run build)
 *
 * Prints the SIP2 messages per call (simulator GET /counters) of alice, dave
 * and a 10-loan patron: GET items, and the account view (patron + items +
 * fees), against the compiled gateway and simulator of this tree, simulator
 * at 0 ms, pool 4, item cache off. The same counting as B7's "B7 messages"
 * row. For the "before" column of bench/RESULTS.md it ran in a copy of main
 * at 7a302b6 (git archive), built, with this file, b7-floor.ts, floor.ts and
 * data.ts copied into its bench/.
 */
import { describeMessages, messagesPerCall } from './b7-floor.js';
import { demoPlusLoansPatron } from './data.js';
import { httpClient } from './driver.js';
import { gatewayEnv, installCleanup, startGateway, startSimulator, stopAll } from './processes.js';

installCleanup();
const library = demoPlusLoansPatron('ten', 10);
try {
  const simulator = await startSimulator({ dataFile: library.file });
  const gateway = await startGateway(
    gatewayEnv(simulator.port, {
      PAIA_SIP2_POOL_MIN: '4',
      PAIA_SIP2_POOL_MAX: '4',
      PAIA_CACHE_ITEMS_ENABLED: 'false',
    }),
  );
  const http = httpClient(gateway.url);
  try {
    process.stdout.write(`${describeMessages(await messagesPerCall(http, simulator)).join('\n')}\n`);
  } finally {
    await http.close();
  }
} finally {
  await stopAll();
  library.remove();
}
