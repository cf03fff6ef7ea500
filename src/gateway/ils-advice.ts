import {
  type Dialect,
  IlsProtocolError,
  IlsTimeout,
  IlsUnavailable,
  type ProtocolReason,
  Sip2EncodeError,
} from '../sip2/index.js';
import type { Sip2Settings } from './parts/sip2-options.js';

/**
 * Why no session to the ILS opens, and what to check: the one source of
 * these texts, for the gateway's start-up error line and /readyz and for the
 * doctor (src/cli/doctor/advice.ts has the doctor's other advice).
 * Explanations switch on the errors' machine-readable `reason` (and, for a
 * socket error, its errno code), never on message text.
 */

export interface AdviceContext {
  /** The SIP2 settings as the gateway runs them. */
  settings: Sip2Settings;
  dialect: Dialect;
  /** Whether sip2.tls is set. */
  tls: boolean;
  target: { host: string; port: number };
}

/**
 * Why no session to the ILS opens, in a few words for /readyz: the terminal
 * login refused, or the ILS not reached at its address. explainOpen() has the
 * whole advice (the start-up error line, the doctor).
 */
export function openProblem(error: unknown, target: { host: string; port: number }): string {
  if (error instanceof IlsUnavailable && error.reason === 'login-rejected')
    return 'the ILS refused the terminal login (check sip2.terminal.user, sip2.terminal.password and sip2.terminal.location)';
  if (error instanceof IlsUnavailable && (error.reason === 'refused' || error.reason === 'connect-error'))
    return `the ILS cannot be reached at ${target.host}:${target.port} (check sip2.host and sip2.port, and that its SIP2 service runs)`;
  if (error instanceof IlsTimeout && error.reason === 'connect-timeout')
    return `the ILS cannot be reached at ${target.host}:${target.port}: no connection within sip2.timeouts.connectMs`;
  return `cannot open a SIP2 session: ${messageOf(error)}`;
}

/**
 * Why the first session (connect, 93 login, 99) could not be opened.
 * `answered` holds the message codes the ILS answered before it failed:
 * a login timeout after an answered 93 is the 99's.
 */
export function explainOpen(error: unknown, ctx: AdviceContext, answered: ReadonlySet<string>): string {
  const sip2 = ctx.settings;
  const { host, port } = ctx.target;
  const where = `sip2.host ("${host}") and sip2.port (${port})`;
  const account = `sip2.terminal.user ("${sip2.terminal.user}"), sip2.terminal.password (PAIA_SIP2_TERMINAL_PASSWORD)`;
  const otherTransport = ctx.tls ? 'plain TCP (sip2.tls: null)' : 'TLS (sip2.tls)';
  if (error instanceof Sip2EncodeError) {
    return `the terminal user, password or location cannot be sent in ${ctx.settings.charset} (${error.field}): check sip2.terminal and sip2.charset`;
  }
  if (error instanceof IlsUnavailable) {
    switch (error.reason) {
      case 'refused':
        return `connection refused (nothing listens there): check ${where}, that the ILS's SIP2 service is running, and that no firewall rejects this host`;
      case 'connect-error':
        return explainSocketError(causeCode(error), ctx, where);
      case 'tls-untrusted':
        return (
          `the ILS's TLS certificate was not trusted (${causeCode(error) ?? 'no code'}): set sip2.tls.ca to the CA that signed it, ` +
          `and sip2.tls.servername to the name in the certificate if it is not "${host}"`
        );
      case 'login-rejected':
        return (
          `the ILS rejected the SIP2 terminal login (94 with ok = 0): check ${account} and sip2.terminal.location ` +
          `("${sip2.terminal.location}") against the terminal account in the ILS`
        );
      case 'closed':
      case 'reset':
        return (
          `the ILS ${error.reason === 'closed' ? 'closed' : 'reset'} the connection during the login: check ${account}, ` +
          `whether the port expects ${otherTransport}, and the ILS's list of allowed client addresses`
        );
      case 'dropped':
        return `the connection was dropped during the login (${error.message})`;
    }
  }
  if (error instanceof IlsTimeout) {
    switch (error.reason) {
      case 'connect-timeout':
        if (ctx.tls) {
          // A plain SIP2 port accepts the TCP connection and then waits for a message: the handshake never ends.
          return (
            `no TLS session within sip2.timeouts.connectMs (${sip2.timeouts.connectMs} ms): the host is down, a firewall drops the packets, ` +
            `or the port speaks plain TCP and waits for SIP2 (then sip2.tls: null); check ${where} and that the ILS lets this host in`
          );
        }
        return (
          `no connection within sip2.timeouts.connectMs (${sip2.timeouts.connectMs} ms): the host is down or a firewall drops the packets; ` +
          `check ${where} and that the ILS lets this host in`
        );
      case 'login-timeout':
      case 'response-timeout':
        if (answered.has('93')) {
          return (
            `the terminal login was accepted, but the ILS did not answer the 99 SC status within sip2.timeouts.responseMs ` +
            `(${sip2.timeouts.responseMs} ms); check the ILS's SIP2 log`
          );
        }
        return (
          `the ILS accepted the connection but did not answer the 93 login within sip2.timeouts.responseMs (${sip2.timeouts.responseMs} ms). ` +
          `Is ${port} the SIP2 port, does it expect ${otherTransport}, and is the line end of dialect ${ctx.dialect.name} ` +
          `(${ctx.dialect.terminator}) what the ILS expects? Or every SIP2 worker of the ILS is busy with other sessions ` +
          `(a running paia-sip2 gateway, self-check machines): stop them for the check, or give the ILS more workers ` +
          `(Koha, SIPServer: max_servers in SIPconfig.xml)`
        );
    }
  }
  if (error instanceof IlsProtocolError) return explainProtocol(error.reason, ctx);
  return messageOf(error);
}

function explainSocketError(code: string | undefined, ctx: AdviceContext, where: string): string {
  const { host } = ctx.target;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
    case 'EAI_FAIL':
      return `the name "${host}" does not resolve (${code}): check sip2.host for typos and that this machine's DNS knows the ILS host`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return `no route to the ILS (${code}): check sip2.host ("${host}") and this host's network and firewall`;
    case 'ECONNRESET':
      return `the ILS reset the connection (${code}): check ${where}, whether the port expects ${ctx.tls ? 'plain TCP (sip2.tls: null)' : 'TLS (sip2.tls)'}, and the ILS's list of allowed client addresses`;
  }
  if (ctx.tls) {
    // A plain SIP2 port answers a ClientHello with nothing, or (when its random bytes hold a CR) with a SIP2 message.
    const plainPort = code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG';
    return plainPort
      ? `the TLS handshake failed (${code}): the port does not speak TLS; it may speak plain TCP and SIP2 (then sip2.tls: null)`
      : `the TLS handshake failed (${code ?? 'no code'}): check that the port speaks TLS, sip2.tls.ca (the CA that signed the ILS certificate), ` +
          `sip2.tls.servername, and the client certificate (sip2.tls.cert/key) if the ILS asks for one`;
  }
  return `cannot connect (${code ?? 'no code'}): check ${where}`;
}

export function explainProtocol(reason: ProtocolReason, ctx: AdviceContext): string {
  const settings = `check sip2.dialect (${ctx.dialect.name}), sip2.charset and sip2.errorDetection (AY/AZ checksums)`;
  switch (reason) {
    case 'unreadable':
      return `the ILS kept sending what cannot be read as SIP2 (bad checksums or garbage) after the resends: ${settings}`;
    case 'oversized':
      return `the ILS sent a message longer than any SIP2 message: is ${ctx.target.port} the SIP2 port (not a web or TLS service)?`;
    case 'unexpected-message':
      return `the ILS answered with a different message than the one asked for: ${settings}`;
    case 'resend-refused':
      return `the ILS could not read our messages (it kept asking for a resend, 96): ${settings}, and the line end of the dialect (${ctx.dialect.terminator})`;
    case 'status-instead-of-response':
      return 'the ILS answered with a status message (98) again instead of the answer: check its SIP2 log';
  }
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function causeCode(error: Error): string | undefined {
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
