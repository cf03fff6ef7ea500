import { z } from 'zod';
import { BUILTIN_DIALECTS, BUILTIN_DIALECTS_TEXT, CHARSETS } from '../../sip2/index.js';
import { integer, must, section } from './validators.js';

/** demo: the embedded SIP2 simulator, used only while sip2.host is null. */

export const demoSection = section({
  /** Dialect the embedded simulator speaks, one of the built-in ones (set sip2.dialect to the same). */
  dialect: z.enum(BUILTIN_DIALECTS, must(`must be one of ${BUILTIN_DIALECTS_TEXT}`)).default('generic'),
  /**
   * Wire charset of the embedded simulator and of the gateway towards it.
   * UTF-8, so the demo library's non-ASCII names and titles come through
   * intact; cp850 shows what a 3M-literal ILS does to them.
   */
  charset: z.enum(CHARSETS, must('must be cp850, latin1 or utf-8')).default('utf-8'),
  /** Port of the embedded simulator on 127.0.0.1; 0 picks a free one. Used only while sip2.host is null. */
  sip2Port: integer(0, 65535, 'must be a TCP port between 0 (a free one) and 65535').default(0),
});
