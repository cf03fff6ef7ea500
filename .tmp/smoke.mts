import { createStateStore } from '/work/main/src/state/index.js';
const mk = () => createStateStore({ store: 'redis', redis: { url: 'redis://127.0.0.1:6390', tlsCa: null, keyPrefix: 't:', connectTimeoutMs: 1000, commandTimeoutMs: 500 }, maxSessions: 10, maxSessionsPerPatron: 2 });
const a = mk(), b = mk();
await a.ready(2000); await b.ready(2000);
const heard: unknown[] = [];
b.onInvalidation((i) => heard.push(i));
const t1 = await a.sessions.create({ patron: 'p', barcode: 'b', scopes: ['read_items'], expiresAt: Date.now() + 60000 });
console.log('get on b', await b.sessions.get(t1));
const t2 = await a.sessions.create({ patron: 'p', barcode: 'b', scopes: [], expiresAt: Date.now() + 60000 });
const t3 = await a.sessions.create({ patron: 'p', barcode: 'b', scopes: [], expiresAt: Date.now() + 60000 });
console.log('t1 after 3 (max 2):', await b.sessions.get(t1), !!(await b.sessions.get(t3)));
console.log('deleteAll', await b.sessions.deleteAllFor('p'), await a.sessions.get(t2));
const l = a.limiter({ name: 'x', points: 2, durationSeconds: 5 });
console.log(await l.take('k'), await l.take('k'), await l.take('k'), await l.peek('k'));
await a.publishInvalidation({ item: 'i1', outcomeUnknown: false });
await new Promise((r) => setTimeout(r, 100));
console.log('heard', heard, a.health());
await a.close(); await b.close();
const c = createStateStore({ store: 'redis', redis: { url: 'redis://127.0.0.1:6399', tlsCa: null, keyPrefix: 't:', connectTimeoutMs: 300, commandTimeoutMs: 200 }, maxSessions: 10, maxSessionsPerPatron: 2 });
try { await c.ready(500); } catch (e) { console.log('ready err', (e as Error).message); }
const t0 = Date.now();
try { await c.sessions.get('x'.repeat(43)); } catch (e) { console.log('get err', (e as Error).name, (e as Error).message, Date.now() - t0, 'ms'); }
console.log(c.health());
await c.close();
