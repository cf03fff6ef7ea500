import { describe, expect, it } from 'vitest';
import { createLogger, type LogFormat } from '../../src/log.js';
import { prettyLine } from '../../src/log-pretty.js';

function capture(format: LogFormat) {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    name: 'paia-sip2',
    format,
    destination: { write: (line: string) => void lines.push(line) },
  });
  return { logger, lines };
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('the JSON log (log.format json)', () => {
  it('writes ISO 8601 UTC times and level names', () => {
    const { logger, lines } = capture('json');
    logger.warn({ component: 'sip2', conn: 3 }, 'SIP2 connection lost');
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 'warn', component: 'sip2', conn: 3, msg: 'SIP2 connection lost' });
    expect(entry.time).toMatch(ISO_TIME);
    expect(Math.abs(Date.parse(entry.time as string) - Date.now())).toBeLessThan(60_000);
  });

  it('still masks passwords and tokens', () => {
    const { logger, lines } = capture('json');
    logger.info({ password: 'hunter22', req: { token: 'abc.def' } }, 'login');
    expect(lines[0]).not.toMatch(/hunter22|abc\.def/);
    expect(JSON.parse(lines[0]!)).toMatchObject({ password: '***', req: { token: '***' } });
  });
});

describe('the pretty log (log.format pretty)', () => {
  it('writes one line: time, level, [component], message, then the other fields as key=value', () => {
    const { logger, lines } = capture('pretty');
    logger.warn(
      { component: 'sip2', conn: 3, reason: 'closed by the ILS', circuit: { state: 'open' } },
      'SIP2 connection lost',
    );
    expect(lines).toHaveLength(1);
    const [time, ...rest] = lines[0]!.split(' ');
    expect(time).toMatch(ISO_TIME);
    expect(rest.join(' ')).toBe(
      'WARN  [sip2] SIP2 connection lost conn=3 reason="closed by the ILS" circuit={"state":"open"}\n',
    );
  });

  it('masks secrets as the JSON log does (it is made from the redacted JSON)', () => {
    const { logger, lines } = capture('pretty');
    logger.info({ terminalPassword: 'paia-secret', authorization: 'Bearer xyz123' }, 'session');
    expect(lines[0]).not.toMatch(/paia-secret|xyz123/);
    expect(lines[0]).toMatch(/terminalPassword=\*\*\* authorization=\*\*\*/);
  });

  it('prints an error stack below the line, indented', () => {
    const { logger, lines } = capture('pretty');
    logger.error({ err: new Error('boom') }, 'failed');
    const [first, second] = lines[0]!.split('\n');
    expect(first).toMatch(/ERROR failed err=boom$/);
    expect(second).toMatch(/^ {4}Error: boom/);
  });

  it('passes text that is not a JSON object on unchanged', () => {
    expect(prettyLine('not json\n')).toBe('not json\n');
    expect(prettyLine('[1,2]\n')).toBe('[1,2]\n');
  });
});
