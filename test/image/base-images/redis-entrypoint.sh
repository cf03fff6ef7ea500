#!/bin/sh
# As the official redis image's docker-entrypoint.sh does: `redis-server` with arguments but no configuration
# file gets --protected-mode no (Redis refuses clients from other hosts otherwise, and the host is one).
set -e
if [ "$1" = redis-server ] && [ "${2#-}" != "$2" -o $# -eq 1 ]; then
  set -- "$@" --protected-mode no
fi
exec "$@"
