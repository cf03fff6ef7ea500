import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { trackChild } from './children.js';

/**
 * A real Redis server for a test file: `redis-server` on 127.0.0.1 and a
 * free port, nothing saved to disk, resolved once it answers PING; stopped
 * (and, when a test run is cut short, killed) afterwards. Fails with a clear
 * message when redis-server is not installed.
 */

const START_TIMEOUT_MS = 10_000;

export interface RedisProcess {
  /** redis://127.0.0.1:PORT */
  readonly url: string;
  readonly port: number;
  /** SIGTERM, then SIGKILL if it has not exited within 5 s. */
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Whether a Redis on `port` answers PING with PONG (within 1 s). */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let text = '';
    const done = (result: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\r\n')) done(text.startsWith('+PONG'));
    });
    socket.once('error', () => done(false));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function spawnRedis(port: number): Promise<{ child: ChildProcess; exited: Promise<unknown> } | 'port taken'> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  let output = '';
  let exit: string | null = null;
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    output = (output + chunk).slice(-20_000);
  });
  child.stderr!.on('data', (chunk: string) => {
    output = (output + chunk).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = `code ${code}, signal ${signal}`;
      resolve();
    });
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const failed = await Promise.race([spawnError, sleep(50).then(() => null)]);
    if (failed) {
      const missing = (failed as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(
        missing
          ? 'redis-server is not installed (not found on PATH): these tests need a real Redis server; install it (e.g. apt-get install redis-server)'
          : `redis-server could not be started: ${failed.message}`,
      );
    }
    if (exit !== null) {
      if (/address already in use/i.test(output)) return 'port taken';
      throw new Error(`redis-server exited at start (${exit}):\n${output}`);
    }
    if (await answersPing(port)) return { child, exited };
  }
  child.kill('SIGKILL');
  throw new Error(
    `redis-server did not answer PING on 127.0.0.1:${port} within ${START_TIMEOUT_MS / 1000} s:\n${output}`,
  );
}

/** Starts redis-server on 127.0.0.1 and a free port; resolves once it answers. */
export async function startRedisProcess(): Promise<RedisProcess> {
  // A free port can be taken by someone else before redis-server binds it: try another.
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const port = await freePort();
    const started = await spawnRedis(port);
    if (started === 'port taken') continue;
    const { child, exited } = started;
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      async stop() {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), 5000)));
        if ((await Promise.race([exited, late])) === 'late') {
          child.kill('SIGKILL');
          await exited;
        }
        clearTimeout(timer);
      },
    };
  }
  throw new Error('redis-server: no free port on 127.0.0.1 after 3 attempts');
}
