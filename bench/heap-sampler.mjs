/**
 * Preloaded into the gateway by bench/profile.ts (`node --import
 * ./bench/heap-sampler.mjs`) when an allocation profile is asked for: V8's
 * sampling heap profiler through the in-process inspector, counting objects
 * the garbage collector has already freed too (node --heap-prof drops them,
 * so it shows what is retained, not what a request allocates). On SIGUSR2
 * (which the gateway does not use) sampling stops and the profile is written
 * to $BENCH_HEAP_PROFILE (a .heapprofile that bench/profile-summary.ts and
 * Chrome DevTools read).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.BENCH_HEAP_PROFILE;
if (file) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  process.once('SIGUSR2', () => {
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error) writeFileSync(`${file}.error`, error.message);
      else {
        // Written aside, then renamed: the file appears complete or not at all.
        writeFileSync(`${file}.part`, JSON.stringify(result.profile));
        renameSync(`${file}.part`, file);
      }
    });
  });
}
