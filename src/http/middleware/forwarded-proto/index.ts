import { malformed } from '../../errors.js';
import { lastForwardedHop } from '../../forwarded.js';
import type { RequestStep } from '../request-steps/index.js';

/**
 * A request step (request-steps) behind a TLS-terminating proxy
 * (http.trustedProxy): PAIA carries passwords and access tokens, so a
 * request the proxy did not receive over HTTPS is refused with 400
 * invalid_request (a request error, not a credentials problem: 403
 * access_denied is for those), before any credentials are read.
 *
 * The proxy's X-Forwarded-Proto decides; with a list (proxies that append),
 * the last entry, the one the trusted proxy itself added, counts. The health
 * endpoints are answered before the PAIA app and are not affected.
 */
export function requireForwardedHttps(): RequestStep {
  return function checkForwardedHttps(c) {
    const proto = lastForwardedHop(c.req.header('x-forwarded-proto'))?.toLowerCase();
    if (proto !== 'https') {
      throw malformed(
        proto
          ? `the request reached the proxy over ${proto}, not HTTPS: PAIA requests must be made over HTTPS; use the https:// URL of this service`
          : 'the request did not come over HTTPS (the proxy sent no X-Forwarded-Proto: https): PAIA requests must be made over HTTPS; use the https:// URL of this service',
      );
    }
  };
}
