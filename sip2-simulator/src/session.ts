import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import {
  type Charset,
  type Decoded,
  type Dialect,
  decodeFrame,
  decodeText,
  encodeMessage,
  endsWithChecksum,
  FrameDecoder,
  RESPONSE_CODE,
  Sip2DecodeError,
  type Sip2Message,
  terminatorOf,
} from '../../src/sip2/index.js';
import { ConnectionConformance } from './conformance/connection.js';
import type { Deviation } from './conformance/rules.js';
import type { ConformanceTally } from './conformance/tally.js';
import type { Counters } from './counters.js';
import { corruptChecksum, type Faults, garbageBytes } from './faults.js';
import { keptClientText, keptServerText } from './kept-text.js';
import type { Library } from './library.js';
import type { Profile } from './profiles.js';
import { type HandledRequest, loginResponse, rejectedResponse, respond } from './responses.js';
import type { TrafficRecorder } from './traffic.js';

/**
 * One client connection: the SIP2 protocol state machine of an ACS.
 *
 * - 93 Login first; anything else before a good login closes the connection;
 *   the third failed login answers 940 and closes.
 * - Error detection on: a request that carries AZ is verified (96 and not
 *   executed on a mismatch); one without AY/AZ is answered too, as real ACSs
 *   do (Koha's and the Perl SIPServer's Sip/MsgType.pm "process the message
 *   anyway"). Each response takes the form of the request it answers: echoed
 *   AY and AZ, or neither. With strictChecksums, a request without a valid
 *   AY/AZ trailer gets 96 and every response is checksummed.
 * - 97 re-sends the last response byte for byte (96 if nothing was sent yet).
 * - A request whose AY and AZ equal the previous request's is a retransmission:
 *   the last response is re-sent and nothing runs again (3M SIP2, "ACS System
 *   Error Handling").
 * - Every SC command of the 3M text is answered. Any other command id gets 96
 *   (as Koha does), so a client waiting for an answer never hangs.
 * - Frames are handled strictly one after another, so pipelined requests are
 *   answered in order even with latency faults.
 * - Every message is checked against the 3M text (conformance/) and its
 *   deviations tallied; with strictConformance a message that breaks a rule
 *   gets 96 and is not executed, as a picky ACS would.
 */

const MAX_FAILED_LOGINS = 3;
const CR = 0x0d;
const LF = 0x0a;
const CR_BYTE = Buffer.from([CR]);

/** Requests the simulator executes: every SC command but 93 login and 97 resend, which the session handles itself. */
const HANDLED: ReadonlySet<string> = new Set(Object.keys(RESPONSE_CODE).filter((code) => code !== '93'));

export interface SessionConfig {
  readonly dialect: Dialect;
  readonly charset: Charset;
  readonly errorDetection: boolean;
  /** With error detection on: refuse (96) requests without AY/AZ instead of answering them. */
  readonly strictChecksums: boolean;
  /** 0 = never. */
  readonly idleTimeoutMs: number;
  /** The server profile (profiles.ts); read per message, so a switch applies to open sessions. */
  readonly profile?: Profile;
  /** Answer 96 to a message that breaks a conformance rule instead of executing it; read per message. */
  readonly strictConformance?: boolean;
}

export interface SessionContext {
  readonly config: SessionConfig;
  readonly library: Library;
  readonly faults: Faults;
  readonly counters: Counters;
  readonly logger: Logger;
  /** Where deviations are tallied; none: checked for strict mode only. */
  readonly conformance?: ConformanceTally;
  /** What the traffic page shows: every message in and out, passwords masked. */
  readonly traffic: TrafficRecorder;
}

let nextId = 1;

export class Session {
  readonly id = nextId++;
  private readonly decoder = new FrameDecoder();
  private readonly log: Logger;
  private chain: Promise<void> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  private loggedIn = false;
  private failedLogins = 0;
  private terminalLocation: string | undefined;
  /** sc-status-first profile: logged in, and no 99 seen yet. */
  private awaitingScStatus = false;
  /** The bytes of the last response, as encoded (before any fault touched them). */
  private lastSent: Buffer | null = null;
  /** "AY:AZ" of the previous request, for retransmission detection. */
  private lastRequestKey: string | null = null;
  /** Whether the client's last frame carried a checksum: responses (96 too) answer in the same form. */
  private peerChecksums = true;
  private closed = false;
  private readonly conformance: ConnectionConformance;
  /** Messages received and not yet handled: one arriving while this is above 0 came before its predecessor's answer. */
  private unanswered = 0;

  constructor(
    private readonly socket: Socket,
    private readonly ctx: SessionContext,
    private readonly onClose: (session: Session) => void = () => {},
  ) {
    this.log = ctx.logger.child({ conn: this.id });
    this.conformance = new ConnectionConformance(ctx.config.strictChecksums);
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    this.log.info({ remote }, 'connection opened');
    ctx.traffic.opened(this.id, remote);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      this.log.debug({ err: error.code ?? error.message }, 'socket error'),
    );
    socket.on('close', () => {
      this.closed = true;
      clearTimeout(this.idleTimer);
      this.log.info('connection closed');
      ctx.traffic.closedConnection(this.id);
      this.onClose(this);
    });
    this.armIdleTimer();
  }

  get isLoggedIn(): boolean {
    return this.loggedIn;
  }

  /** Drops the connection at once (an ILS going away). */
  destroy(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.log.info({ reason }, 'closing connection');
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      if (!(error instanceof Sip2DecodeError)) throw error;
      this.log.warn({ reason: error.reason }, 'undecodable input');
      this.enqueue(() => this.sendResend());
      return;
    }
    for (const frame of frames) {
      this.armIdleTimer();
      const outstanding = this.unanswered > 0;
      this.unanswered += 1;
      this.enqueue(() => this.handleFrame(frame, outstanding).finally(() => (this.unanswered -= 1)));
    }
    if (chunk.at(-1) === LF && this.decoder.bufferedBytes > 0) this.onLfTerminated(chunk);
  }

  /**
   * A client that ends its message in LF instead of CR: the framer waits for a
   * CR that never comes, as a real ACS's would, and the client hangs. Named in
   * the report; in strict mode dropped and answered 96 at once.
   */
  private onLfTerminated(chunk: Buffer): void {
    const raw = chunk.subarray(chunk.lastIndexOf(CR) + 1);
    const outstanding = this.unanswered > 0;
    this.enqueue(async () => {
      const deviations = this.checkConformance(raw, outstanding);
      this.trace('in', raw, deviations);
      if (this.ctx.config.strictConformance && deviations.length > 0) {
        this.decoder.reset();
        return this.sendResend();
      }
    });
  }

  /** Checks one message as received against the 3M text and tallies what it breaks. */
  private checkConformance(raw: Buffer, outstanding: boolean): Deviation[] {
    const { config, conformance } = this.ctx;
    const deviations = this.conformance.inspect(raw, { loggedIn: this.loggedIn, outstanding }, config.charset);
    conformance?.record(this.id, decodeText(raw, config.charset), deviations);
    return deviations;
  }

  private enqueue(task: () => Promise<void>): void {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : task()))
      .catch((error: unknown) => this.log.error({ err: error }, 'failed to handle a message'));
  }

  private armIdleTimer(): void {
    clearTimeout(this.idleTimer);
    const ms = this.ctx.config.idleTimeoutMs;
    if (ms > 0) this.idleTimer = setTimeout(() => this.destroy(`idle for ${ms / 1000} s`), ms);
  }

  // ------------------------------------------------------------ protocol

  private async handleFrame(frame: Buffer, outstanding: boolean): Promise<void> {
    const { config, counters, faults } = this.ctx;
    const deviations = this.checkConformance(Buffer.concat([frame, CR_BYTE]), outstanding);
    this.trace('in', frame, deviations);
    this.peerChecksums = config.strictChecksums || endsWithChecksum(frame);
    let decoded: Decoded;
    try {
      decoded = decodeFrame(frame, {
        charset: config.charset,
        errorDetection: config.errorDetection,
        checksumOptional: !config.strictChecksums,
      });
    } catch (error) {
      if (!(error instanceof Sip2DecodeError)) throw error;
      this.log.warn({ reason: error.reason }, 'bad message, asking for a resend (96)');
      this.lastRequestKey = null;
      return this.sendResend();
    }
    const code = decoded.kind === 'message' ? decoded.message.code : decoded.code;
    counters.countReceived(code);

    // Before login the session closes the connection as it always has; otherwise a picky ACS asks again.
    if (config.strictConformance && deviations.length > 0 && !deviations.some((d) => d.rule === 'login-first')) {
      this.lastRequestKey = null;
      this.log.info({ code, rules: deviations.map((d) => d.rule) }, 'non-conforming message, asking for a resend (96)');
      return this.sendResend();
    }

    if (code === '97') {
      if (this.lastSent) {
        this.log.debug('97: re-sending the last response');
        return this.deliver(this.lastSent);
      }
      return this.sendResend();
    }

    if (decoded.kind === 'unknown' || (!HANDLED.has(code) && code !== '93')) {
      this.lastRequestKey = null;
      if (!this.loggedIn) return this.destroy(`message ${code} before login`);
      this.log.info({ code }, 'not an SC command, asking for a resend (96)');
      return this.sendResend();
    }
    const message = decoded.message;

    if (config.errorDetection && decoded.sequence === null) {
      // Without AY there is no retransmission to recognise.
      this.lastRequestKey = null;
      if (config.strictChecksums) {
        this.log.warn({ code }, 'request without AY sequence number, asking for a resend (96)');
        return this.sendResend();
      }
    } else if (config.errorDetection) {
      const key = `${decoded.sequence}:${frame.toString('latin1', frame.length - 4).toUpperCase()}`;
      if (key === this.lastRequestKey && this.lastSent) {
        this.log.info({ code }, 'retransmission (same AY and AZ): re-sending the last response, not executing');
        return this.deliver(this.lastSent);
      }
      this.lastRequestKey = key;
    }

    const sequence = decoded.sequence ?? 0;
    if (message.code === '93') return this.login(message.loginUserId, message.loginPassword, sequence);
    if (!this.loggedIn) return this.destroy(`message ${code} before login`);
    if (this.awaitingScStatus) {
      // SIPServer's sip_protocol_loop: after login it expects SC Status and dies on anything else.
      if (code !== '99')
        return this.destroy(`message ${code} after login, expected 99 first (sc-status-first profile)`);
      this.awaitingScStatus = false;
    }

    const request = message as HandledRequest;
    const responseContext = {
      library: this.ctx.library,
      dialect: config.dialect,
      terminalLocation: this.terminalLocation,
      profile: config.profile,
      listCount: faults.listCount(),
    };
    if (faults.rejects(code)) {
      this.log.info({ code }, 'rejected by fault injection');
      return this.send(rejectedResponse(request, responseContext), sequence);
    }
    const response = respond(request, responseContext);
    counters.countExecuted(code);
    return this.send(response, sequence);
  }

  private async login(user: string, password: string, sequence: number): Promise<void> {
    this.ctx.counters.countExecuted('93');
    const terminal = this.ctx.library.authenticateTerminal(user, password);
    if (terminal) {
      this.loggedIn = true;
      this.failedLogins = 0;
      this.terminalLocation = terminal.location;
      this.awaitingScStatus = this.ctx.config.profile?.scStatusFirst === true;
      this.log.info({ user }, 'login accepted');
      this.ctx.traffic.loggedIn(this.id, user);
      return this.send(loginResponse(true), sequence);
    }
    this.loggedIn = false;
    this.failedLogins += 1;
    this.log.warn({ user, failures: this.failedLogins }, 'login rejected');
    await this.send(loginResponse(false), sequence);
    if (this.failedLogins >= MAX_FAILED_LOGINS && !this.closed) {
      this.closed = true;
      this.log.warn(`${MAX_FAILED_LOGINS} failed logins, closing the connection`);
      this.socket.destroySoon();
    }
  }

  // ------------------------------------------------------------ output

  private async send(message: Sip2Message, sequence: number): Promise<void> {
    const { config } = this.ctx;
    let bytes: Buffer;
    try {
      bytes = encodeMessage(message, {
        charset: config.charset,
        errorDetection: config.errorDetection && this.peerChecksums,
        sequence,
        terminator: terminatorOf(config.dialect),
        unencodable: 'replace',
      });
    } catch (error) {
      this.log.error({ err: (error as Error).message, code: message.code }, 'cannot encode the response, sending 96');
      return this.sendResend();
    }
    this.lastSent = bytes;
    return this.deliver(bytes);
  }

  /** 96 Request SC Resend. It is remembered as the last response, as 3M SIP2 wants for a following 97. */
  private sendResend(): Promise<void> {
    const { config } = this.ctx;
    const bytes = encodeMessage(
      { code: '96' },
      {
        charset: config.charset,
        errorDetection: config.errorDetection && this.peerChecksums,
        terminator: terminatorOf(config.dialect),
      },
    );
    this.lastSent = bytes;
    return this.deliver(bytes);
  }

  /** Writes a response through the fault injector: latency first, then at most one reply fault. */
  private async deliver(bytes: Buffer): Promise<void> {
    const { faults } = this.ctx;
    const delay = faults.delayMs();
    if (delay > 0) await sleep(delay);
    if (this.closed || this.socket.destroyed) return;
    const fault = faults.takeReplyFault();
    switch (fault) {
      case 'hang':
        this.log.info('fault: hang, response withheld');
        return;
      case 'dropMidReply': {
        this.log.info('fault: dropping the connection in the middle of the response');
        this.closed = true;
        const half = bytes.subarray(0, Math.max(1, Math.floor(bytes.length / 2)));
        await new Promise<void>((resolve) => this.socket.write(half, () => resolve()));
        this.socket.destroy();
        return;
      }
      case 'garbage': {
        this.log.info('fault: answering garbage');
        const junk = garbageBytes();
        this.trace('out', junk);
        this.socket.write(junk);
        return;
      }
      case 'corruptChecksums': {
        this.log.info('fault: corrupting the checksum');
        const bad = corruptChecksum(bytes);
        this.trace('out', bad);
        this.socket.write(bad);
        return;
      }
      case null:
        this.trace('out', bytes);
        this.socket.write(bytes);
    }
  }

  private trace(direction: 'in' | 'out', bytes: Buffer, deviations: Deviation[] = []): void {
    const text = decodeText(bytes, this.ctx.config.charset).replace(/[\r\n]+$/, '');
    this.ctx.traffic.record(this.id, direction, text, deviations);
    if (this.log.isLevelEnabled('debug'))
      this.log.debug({ dir: direction, text: (direction === 'in' ? keptClientText : keptServerText)(text) }, 'sip2');
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
