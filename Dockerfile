# paia-sip2 container image.
#
#   docker build -t paia-sip2 .                      # Node 22; --build-arg NODE_VERSION=24 for 24
#   docker run --rm --read-only --tmpfs /tmp -p 127.0.0.1:8080:8080 \
#     -v paia-sip2-state:/var/lib/paia-sip2 \
#     -e PAIA_HTTP_TRUSTED_PROXY=true -e PAIA_SIP2_HOST=ils.example.org ... paia-sip2
#
# The build stage compiles the TypeScript (dev dependencies); the runtime
# stage holds the compiled code, the runtime dependencies, config/ and the
# simulator's demo data, and runs as the unprivileged `node` user. tini is
# PID 1: it passes SIGTERM, SIGINT and SIGHUP to the gateway and reaps
# zombies. The one thing written at run time is the session state file in
# /var/lib/paia-sip2 (state.dir, a VOLUME owned by `node`), so `--read-only`
# works; mount a named volume there (-v paia-sip2-state:/var/lib/paia-sip2)
# to keep sessions when the container is replaced. A tmpfs /tmp is customary
# but not needed. The SIP2 simulator is in the image too:
#   docker run --rm -p 127.0.0.1:6001:6001 paia-sip2 \
#     node dist/src/cli/main.js simulator --host 0.0.0.0 --port 6001
# (its control endpoint and traffic page listen on the container's 127.0.0.1 only).
# test/integration/compiled.test.ts
# runs the CMD below from a directory laid out as this stage's COPY lines
# say, and the HEALTHCHECK against it.
ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency needs its install scripts to compile (package.json allowScripts blocks them too).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY sip2-simulator/src ./sip2-simulator/src
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/sip2-simulator ./dist/sip2-simulator
COPY config ./config
COPY sip2-simulator/data ./sip2-simulator/data
COPY sip2-simulator/page ./sip2-simulator/page
# The package's command on the PATH: `docker run IMAGE paia-sip2 simulator ...` (or doctor, check-config).
COPY bin ./bin
RUN ln -s /app/bin/paia-sip2.mjs /usr/local/bin/paia-sip2
# Listen on every interface of the container. Plain HTTP off loopback is refused unless
# http.tls (PAIA_HTTP_TLS_CERT/_KEY) or http.trustedProxy (a TLS-terminating proxy in front) is set.
ENV PAIA_HTTP_HOST=0.0.0.0 \
    PAIA_HTTP_PORT=8080 \
    PAIA_STATE_DIR=/var/lib/paia-sip2
# Sessions across restarts (state.store memory): a volume the unprivileged user may write, mode 0700.
RUN install -d -o node -g node -m 0700 /var/lib/paia-sip2
VOLUME ["/var/lib/paia-sip2"]
USER node
EXPOSE 8080
# /healthz over plain HTTP on the container's own port (no curl in slim images).
# With http.tls the gateway speaks HTTPS only: override the check (docs/operations.md, "Running in production").
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PAIA_HTTP_PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=60", "--expose-gc", "dist/src/cli/main.js", "serve"]
