import { EventEmitter } from 'node:events';
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import type { AnomalyLog } from './anomalies.js';
import type { Charset } from './charset.js';
import { decodeFrame, type EncodeOptions, encodeMessage, redactSecrets } from './codec.js';
import {
  IlsProtocolError,
  IlsTimeout,
  IlsUnavailable,
  Sip2DecodeError,
  type Sip2Error,
  type Sip2ErrorCode,
} from './errors.js';
import { FrameDecoder } from './framer.js';
import { SC_STATUS } from './messages.js';
import {
  type AcsStatus,
  NON_IDEMPOTENT,
  RESPONSE_CODE,
  type RequestCode,
  type RequestMessage,
  type ResponseOf,
  type Sip2Message,
} from './spec.js';

/** One request/response exchange on a connection, as reported to ConnectionOptions.onRoundTrip. */
export interface RoundTripEvent {
  /** The request's message code (93 login, 99 status, 63 patron information ...). */
  code: RequestCode;
  /** From the request's first byte to its answer or failure, resends (96/97/98) included. */
  seconds: number;
  /** ok: an answer of the expected kind came back; otherwise the Sip2Error code it failed with. */
  outcome: 'ok' | Sip2ErrorCode;
}

export interface ConnectionOptions {
  host: string;
  port: number;
  /** Connect with TLS using these options (CA, client certificate ...); plain TCP when absent. */
  tls?: tls.ConnectionOptions | undefined;
  charset: Charset;
  terminator: '\r' | '\r\n';
  errorDetection: boolean;
  /** SIP2 terminal account (93 CN / CO) and location (CP). */
  loginUserId: string;
  loginPassword: string;
  locationCode?: string | undefined;
  connectTimeoutMs: number;
  /** Bound on one request, resends (96/97) included. */
  responseTimeoutMs: number;
  /** How many 97s (bad checksum from the ILS) and how many 96-asked resends per request. */
  maxResends: number;
  maxFrameBytes?: number | undefined;
  logger?: Logger | undefined;
  /** For logs: which connection of the pool. */
  id?: number | undefined;
  /**
   * Called once per request/response exchange (the 93 login and 99 status of
   * open() too), after it is decided; for metrics. Not called for a message
   * that could not be encoded (nothing was sent). Must not throw; if it does,
   * the error is ignored.
   */
  onRoundTrip?: ((event: RoundTripEvent) => void) | undefined;
  /** Where protocol anomalies (stale or unsolicited frames, unreadable answers) go: logged once per interval. */
  anomalies?: AnomalyLog | undefined;
}

/** How a connection ended, as its `close` event tells. */
export interface ConnectionClose {
  reason: string;
  /** Closed while nothing was in flight: an ILS closing idle sessions, not a failure. */
  idle: boolean;
  /** The ILS (or the network) ended it, not this process. */
  byPeer: boolean;
}

/** The TLS session of a connection, for the doctor: what a sysadmin checks about the ILS's certificate. */
export interface TlsSessionInfo {
  /** Negotiated protocol, e.g. TLSv1.3. */
  protocol: string | null;
  /** The certificate's subject common name. */
  subject: string | null;
  issuer: string | null;
  /** As OpenSSL writes it, e.g. "Jan  1 00:00:00 2030 GMT". */
  validTo: string | null;
  /** Checked against the trusted CAs; false only with sip2.tls.rejectUnauthorized false. */
  verified: boolean;
  /** Why it was not verified (an OpenSSL code such as SELF_SIGNED_CERT_IN_CHAIN). */
  verifyError: string | null;
}

/**
 * connecting -> login -> ready <-> busy -> closed. `closed` is final: a
 * connection never comes back, the pool replaces it.
 */
export type ConnectionStatus = 'connecting' | 'login' | 'ready' | 'busy' | 'closed';

interface Exchange {
  readonly request: RequestMessage;
  readonly bytes: Buffer;
  readonly expected: string;
  readonly sequence: number;
  /** When it was sent (performance.now), for the round-trip observer; 0 without one. */
  readonly sentAt: number;
  resent97: number;
  resent96: number;
  resentAfter98: boolean;
  lastSentWas97: boolean;
  readonly resolve: (message: Sip2Message) => void;
  readonly reject: (error: Sip2Error) => void;
}

/**
 * One SIP2 session over one socket: 93 login, 99 status, then requests one at
 * a time. Every failure that leaves the session in an unknown state (timeout,
 * garbage, EOF) closes it, because a late reply could otherwise be taken as
 * the answer to the next request.
 */
export class Sip2Connection extends EventEmitter<{ close: [ConnectionClose] }> {
  readonly id: number;
  readonly createdAt = Date.now();
  /** Whether any request after login was sent on it: a connection the ILS drops before that counts as a failed connect. */
  servedRequest = false;

  private state: ConnectionStatus = 'connecting';
  private socket: net.Socket | null = null;
  private readonly decoder: FrameDecoder;
  private readonly wire: EncodeOptions;
  /**
   * `wire` with each AY sequence number 0-9, made once: a copy of the options per message (a spread) was
   * the connection's largest own cost in the CPU profile of B1's load.
   */
  private readonly wireBySequence: readonly EncodeOptions[];
  private sequence = 0;
  private exchange: Exchange | null = null;
  /**
   * The bound on the exchange in flight, resends included: one timer for the connection's life, re-armed
   * with refresh() as each request goes out (never a timer per request), so it fires responseTimeoutMs
   * after the request in flight went out. Firing after that request was answered, it does nothing.
   */
  private responseTimer: NodeJS.Timeout | null = null;
  private acs: AcsStatus | null = null;
  private closeReason = '';

  private constructor(private readonly options: ConnectionOptions) {
    super();
    this.id = options.id ?? 0;
    this.decoder = new FrameDecoder({ maxFrameBytes: options.maxFrameBytes });
    this.wire = {
      charset: options.charset,
      errorDetection: options.errorDetection,
      terminator: options.terminator,
      unencodable: 'throw',
    };
    this.wireBySequence = Array.from({ length: 10 }, (_, sequence) => ({ ...this.wire, sequence }));
  }

  /** Connects, logs in (93) and reads the ACS status (99/98). Rejects with a typed backend error. */
  static async open(options: ConnectionOptions): Promise<Sip2Connection> {
    const connection = new Sip2Connection(options);
    try {
      await connection.connect();
      connection.setStatus('login');
      const login = await connection.transmitDuringLogin({
        code: '93',
        uidAlgorithm: '0',
        pwdAlgorithm: '0',
        loginUserId: options.loginUserId,
        loginPassword: options.loginPassword,
        locationCode: options.locationCode,
      });
      if (!login.ok) {
        throw new IlsUnavailable(
          'login-rejected',
          'the ILS rejected the SIP2 terminal login (check the terminal user and password)',
        );
      }
      connection.acs = await connection.transmitDuringLogin(SC_STATUS);
      connection.setStatus('ready');
      return connection;
    } catch (error) {
      connection.destroy(error instanceof Error ? error.message : 'open failed');
      throw error;
    }
  }

  /**
   * A login-time exchange: a timeout here means the ILS accepted the TCP
   * connection but serves no session on it yet (a pre-forking server with no
   * free worker), which the pool tells apart from an ILS that stopped answering.
   */
  private async transmitDuringLogin<M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>> {
    try {
      return await this.transmit(message);
    } catch (error) {
      if (error instanceof IlsTimeout) {
        throw new IlsTimeout(
          'login-timeout',
          `the ILS did not answer the ${message.code} of a new SIP2 session within ${this.options.responseTimeoutMs} ms`,
          {
            cause: error,
            requestSent: true,
          },
        );
      }
      throw error;
    }
  }

  get status(): ConnectionStatus {
    return this.state;
  }

  /** The last 98 the ILS sent (on-line status, supported messages ...). */
  get acsStatus(): AcsStatus | null {
    return this.acs;
  }

  /** The TLS session once connected; null over plain TCP. */
  get tlsSession(): TlsSessionInfo | null {
    const socket = this.socket;
    if (!(socket instanceof tls.TLSSocket)) return null;
    const cert = socket.getPeerCertificate();
    const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) ?? null;
    const error = socket.authorizationError as Error | string | null;
    return {
      protocol: socket.getProtocol(),
      subject: first(cert.subject?.CN),
      issuer: first(cert.issuer?.CN),
      validTo: cert.valid_to ?? null,
      verified: socket.authorized,
      verifyError: error === null ? null : typeof error === 'string' ? error : error.message,
    };
  }

  get isUsable(): boolean {
    return this.state === 'ready';
  }

  /**
   * Sends one request and resolves with its response. One at a time: the pool
   * guarantees it, and a second concurrent call is a bug, so it throws.
   */
  async send<M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>> {
    if (this.state !== 'ready') {
      throw new IlsUnavailable('dropped', `SIP2 connection ${this.id} is ${this.state}, not ready`);
    }
    this.setStatus('busy');
    this.servedRequest = true;
    try {
      const response = await this.transmit(message);
      // Every 98 (a keepalive's too) is the ILS's current status: readiness follows it.
      if (response.code === '98') this.acs = response as AcsStatus;
      return response;
    } finally {
      if (this.status === 'busy') this.setStatus('ready');
    }
  }

  /** Ends the session politely (FIN); pending work is failed. */
  close(reason = 'closed'): void {
    if (this.state === 'closed') return;
    const socket = this.socket;
    socket?.end();
    // An ILS that never answers our FIN must not keep the socket half-open.
    if (socket) setTimeout(() => socket.destroy(), 2000).unref();
    this.finish(reason, 'dropped', false);
  }

  /** Drops the socket at once. */
  destroy(reason = 'destroyed'): void {
    if (this.state === 'closed') return;
    this.socket?.destroy();
    this.finish(reason, 'dropped', false);
  }

  // ------------------------------------------------------------ internals

  private connect(): Promise<void> {
    const { host, port, connectTimeoutMs } = this.options;
    return new Promise<void>((resolve, reject) => {
      const onConnected = () => {
        clearTimeout(timer);
        socket.off('error', onError);
        resolve();
      };
      const onError = (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        // A certificate check that failed is a configuration problem (sip2.tls.ca, .servername): say so plainly.
        const untrusted = this.options.tls !== undefined && /CERT|SIGNATURE|ALTNAME|ISSUER/.test(error.code ?? '');
        const why = untrusted
          ? `the ILS's TLS certificate was not trusted: ${error.code}: ${error.message}`
          : (error.code ?? error.message);
        const reason = untrusted ? 'tls-untrusted' : error.code === 'ECONNREFUSED' ? 'refused' : 'connect-error';
        reject(new IlsUnavailable(reason, `cannot connect to the ILS at ${host}:${port} (${why})`, { cause: error }));
      };
      const socket = this.options.tls
        ? tls.connect({ host, port, ...this.options.tls }, onConnected)
        : net.connect({ host, port }, onConnected);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new IlsTimeout(
            'connect-timeout',
            `no connection to the ILS at ${host}:${port} within ${connectTimeoutMs} ms`,
          ),
        );
      }, connectTimeoutMs);
      socket.once('error', onError);
      socket.setNoDelay(true);
      this.socket = socket;
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
      socket.on('error', (error: NodeJS.ErrnoException) =>
        this.finish(`socket error: ${error.code ?? error.message}`, 'reset', true),
      );
      socket.on('close', () => this.finish('closed by the ILS', 'closed', true));
    });
  }

  private transmit<M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>> {
    const sequence = this.nextSequence();
    let bytes: Buffer;
    try {
      bytes = encodeMessage(message, this.wireBySequence[sequence]!);
    } catch (error) {
      // Nothing left this process: the caller gets the encode error as it is.
      return Promise.reject(error);
    }
    return new Promise<ResponseOf<M['code']>>((resolve, reject) => {
      this.exchange = {
        request: message,
        bytes,
        expected: RESPONSE_CODE[message.code],
        sequence,
        sentAt: this.options.onRoundTrip === undefined ? 0 : performance.now(),
        resent97: 0,
        resent96: 0,
        resentAfter98: false,
        lastSentWas97: false,
        resolve: resolve as (message: Sip2Message) => void,
        reject,
      };
      if (this.responseTimer === null) {
        // Unref'd: an exchange in flight keeps the process alive through its socket.
        this.responseTimer = setTimeout(() => this.onResponseTimeout(), this.options.responseTimeoutMs).unref();
      } else {
        this.responseTimer.refresh();
      }
      this.write(bytes);
    });
  }

  /** The response timer fired, responseTimeoutMs after the last request went out: if it is still in flight, it failed. */
  private onResponseTimeout(): void {
    const exchange = this.exchange;
    if (exchange === null) return;
    this.failExchange(
      new IlsTimeout(
        'response-timeout',
        `the ILS did not answer a ${exchange.request.code} message within ${this.options.responseTimeoutMs} ms`,
        { requestSent: true },
      ),
    );
  }

  /** Tells the round-trip observer how an exchange ended; metrics must never break a SIP2 exchange. */
  private report(exchange: Exchange, outcome: RoundTripEvent['outcome']): void {
    const observer = this.options.onRoundTrip;
    if (observer === undefined) return;
    try {
      observer({ code: exchange.request.code, seconds: (performance.now() - exchange.sentAt) / 1000, outcome });
    } catch {
      // Ignored, as the option says.
    }
  }

  private write(bytes: Buffer): void {
    const socket = this.socket;
    if (!socket || socket.destroyed) {
      this.failExchange(new IlsUnavailable('dropped', 'the SIP2 connection is closed', { requestSent: false }));
      return;
    }
    if (this.options.logger?.isLevelEnabled('debug')) {
      this.options.logger.debug({ conn: this.id, out: redactSecrets(bytes.toString('latin1').trimEnd()) }, 'sip2 >>');
    }
    socket.write(bytes);
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.failExchange(
        new IlsProtocolError('oversized', 'the ILS sent an oversized SIP2 message', {
          cause: error,
          requestSent: true,
        }),
      );
      this.destroy('oversized frame');
      return;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private onFrame(frame: Buffer): void {
    const exchange = this.exchange;
    if (this.options.logger?.isLevelEnabled('debug')) {
      this.options.logger.debug({ conn: this.id, in: redactSecrets(frame.toString('latin1')) }, 'sip2 <<');
    }
    if (!exchange) {
      // The 3M text says the ACS never sends unsolicited messages; ignore rather than guess.
      this.options.anomalies?.report('unsolicited-frame', { conn: this.id });
      return;
    }
    let decoded;
    try {
      decoded = decodeFrame(frame, this.wire);
    } catch (error) {
      if (!(error instanceof Sip2DecodeError)) throw error;
      this.onCorruptResponse(exchange, error);
      return;
    }
    if (decoded.kind === 'unknown') {
      this.failExchange(
        new IlsProtocolError('unexpected-message', `the ILS answered with an unknown message ${decoded.code}`, {
          requestSent: true,
        }),
      );
      this.destroy('unknown message');
      return;
    }
    const response = decoded.message;
    if (response.code === '96') {
      this.onResendRequested(exchange);
      return;
    }
    if (this.options.errorDetection && decoded.sequence !== null && decoded.sequence !== exchange.sequence) {
      // 3M: discard a response whose sequence number does not match, and keep waiting.
      this.options.anomalies?.report('stale-sequence', {
        conn: this.id,
        got: decoded.sequence,
        want: exchange.sequence,
      });
      return;
    }
    if (response.code === exchange.expected) {
      this.exchange = null;
      this.report(exchange, 'ok');
      exchange.resolve(response);
      return;
    }
    if (response.code === '98') {
      this.onStatusInsteadOfResponse(exchange, response);
      return;
    }
    this.failExchange(
      new IlsProtocolError(
        'unexpected-message',
        `the ILS answered a ${exchange.request.code} message with a ${response.code} message`,
        {
          requestSent: true,
        },
      ),
    );
    this.destroy('unexpected response');
  }

  /** Bad checksum or garbage: ask for the response again (97), a bounded number of times. */
  private onCorruptResponse(exchange: Exchange, error: Sip2DecodeError): void {
    if (exchange.resent97 >= this.options.maxResends) {
      this.failExchange(
        new IlsProtocolError(
          'unreadable',
          `the ILS kept sending unreadable SIP2 (${error.reason}) after ${exchange.resent97} resend requests`,
          {
            cause: error,
            requestSent: true,
          },
        ),
      );
      this.destroy('unreadable responses');
      return;
    }
    exchange.resent97++;
    exchange.lastSentWas97 = true;
    this.options.anomalies?.report('unreadable-response', {
      conn: this.id,
      reason: error.reason,
      attempt: exchange.resent97,
    });
    this.write(encodeMessage({ code: '97' }, this.wire));
  }

  /**
   * The ILS could not read our message (96): send the identical bytes again.
   * This is the only resend of a non-idempotent message we ever do: the ILS
   * has not executed a message it could not read.
   */
  private onResendRequested(exchange: Exchange): void {
    if (exchange.lastSentWas97) {
      // 3M: a 96 in answer to our 97 means communication has failed.
      this.failExchange(
        new IlsProtocolError('resend-refused', 'the ILS and the gateway cannot read each other (96 after 97)', {
          requestSent: true,
        }),
      );
      this.destroy('96 after 97');
      return;
    }
    if (exchange.resent96 >= this.options.maxResends) {
      this.failExchange(
        new IlsProtocolError(
          'resend-refused',
          `the ILS could not read our ${exchange.request.code} message after ${exchange.resent96} resends`,
          {
            requestSent: true,
          },
        ),
      );
      this.destroy('too many 96');
      return;
    }
    exchange.resent96++;
    this.options.anomalies?.report('resend-requested', {
      conn: this.id,
      code: exchange.request.code,
      attempt: exchange.resent96,
    });
    this.write(exchange.bytes);
  }

  /**
   * 3M: an ACS that wants to change status answers the next message with a 98
   * and the SC sends its command again. We do that for reads only: for a
   * renew or hold we cannot be sure the ILS did not act, so it fails instead.
   */
  private onStatusInsteadOfResponse(exchange: Exchange, status: AcsStatus): void {
    this.acs = status;
    if (NON_IDEMPOTENT.has(exchange.request.code) || exchange.resentAfter98) {
      this.failExchange(
        new IlsProtocolError(
          'status-instead-of-response',
          `the ILS answered a ${exchange.request.code} message with a status message`,
          {
            requestSent: true,
          },
        ),
      );
      this.destroy('status instead of response');
      return;
    }
    exchange.resentAfter98 = true;
    const sequence = this.nextSequence();
    const bytes = encodeMessage(exchange.request, this.wireBySequence[sequence]!);
    this.exchange = { ...exchange, bytes, sequence, lastSentWas97: false };
    this.write(bytes);
  }

  private failExchange(error: Sip2Error): void {
    const exchange = this.exchange;
    if (!exchange) return;
    this.exchange = null;
    this.report(exchange, error.code);
    exchange.reject(error);
    if (error instanceof IlsTimeout) this.destroy('response timeout');
  }

  private finish(reason: string, kind: 'closed' | 'reset' | 'dropped', byPeer: boolean): void {
    if (this.state === 'closed') return;
    this.closeReason = reason;
    const idle = this.exchange === null;
    this.setStatus('closed');
    if (this.responseTimer !== null) clearTimeout(this.responseTimer);
    this.responseTimer = null;
    this.failExchange(
      new IlsUnavailable(kind, `the SIP2 connection to the ILS was lost (${reason})`, { requestSent: !idle }),
    );
    this.decoder.reset();
    this.emit('close', { reason, idle, byPeer });
  }

  private setStatus(next: ConnectionStatus): void {
    if (next === this.state) return;
    const from = this.state;
    this.state = next;
    // ready <-> busy flips on every request; only the rarer transitions are worth a log line.
    if (!(from === 'ready' && next === 'busy') && !(from === 'busy' && next === 'ready')) {
      this.options.logger?.debug(
        { conn: this.id, from, to: next, reason: next === 'closed' ? this.closeReason : undefined },
        'sip2 connection status',
      );
    }
  }

  private nextSequence(): number {
    const sequence = this.sequence;
    this.sequence = (this.sequence + 1) % 10;
    return sequence;
  }
}

/** The pool's connection factory: each call opens one session with these options. */
export function sip2Sessions(options: Omit<ConnectionOptions, 'id'>): (id: number) => Promise<Sip2Connection> {
  return (id) => Sip2Connection.open({ ...options, id });
}
