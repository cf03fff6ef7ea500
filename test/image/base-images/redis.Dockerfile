# Stand-in for the official redis:7 image, for the testcontainers store tests
# (test/integration/redis-store.test.ts, PAIA_TEST_REDIS_IMAGE) on a machine without a container registry:
# Debian bookworm's redis-server package (Redis 7.0) on the stand-in debian:bookworm-slim. As in the official
# image, `redis-server ARGS` as the command runs Redis in the foreground, and without a configuration file
# protected mode is off (redis-entrypoint.sh), since the clients come from outside the container.
FROM debian:bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends redis-server \
  && rm -rf /var/lib/apt/lists/*
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint.sh
USER redis
WORKDIR /var/lib/redis
EXPOSE 6379
ENTRYPOINT ["/usr/local/bin/redis-entrypoint.sh"]
CMD ["redis-server"]
