#!/usr/bin/env bash
# The whole suite: the generated types must match the document and the document must pass its
# linters; then every test runs on SQLite and on MySQL, and the HTTP tests run once more through
# Prism's validating proxy. Without a MySQL server the MySQL half is reported as not run, except
# in CI (CI=true), where it must run; the same goes for the browser test of /docs without
# Chromium and for the database crash test without a mariadbd of its own to kill.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run -s check:generated
npm run -s lint   # type check (src and tests, against the generated types) and Spectral
npm run -s build  # the CLI tests run the compiled entry points, as npm run does

mysql_url="${TEST_MYSQL_URL:-mysql://root@127.0.0.1:3306/}"
redis_url="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
# The mysql project holds the tests that need local servers: MySQL, and Redis for shared rate limits.
if node -e '
  const url = new URL(process.argv[1]);
  require("mysql2/promise").createConnection({ host: url.hostname, port: Number(url.port || 3306),
    user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), connectTimeout: 3000 })
  .then((c) => c.end(), () => process.exit(1));' "$mysql_url" &&
  node -e '
  const client = require("redis").createClient({ url: process.argv[1], socket: { connectTimeout: 3000, reconnectStrategy: false } });
  client.on("error", () => {});
  client.connect().then(() => client.quit(), () => process.exit(1));' "$redis_url"; then
  projects=(sqlite mysql)
elif [ "${CI:-}" = true ]; then
  echo "MySQL at $mysql_url or Redis at $redis_url does not answer, and CI requires the MySQL tests." >&2
  exit 1
else
  echo "*** The MySQL tests did NOT run: no MySQL server at $mysql_url or no Redis at $redis_url." >&2
  echo "*** Point TEST_MYSQL_URL (a user that may create databases) and TEST_REDIS_URL at them to run them." >&2
  projects=(sqlite)
fi

mariadbd="${MARIADBD_PATH:-/usr/sbin/mariadbd}"
if [ -x "$mariadbd" ] && command -v mariadb-install-db >/dev/null; then
  projects+=(crash)
elif [ "${CI:-}" = true ]; then
  echo "No mariadbd at $mariadbd, and CI requires the database crash test." >&2
  exit 1
else
  echo "*** The database crash test did NOT run: no mariadbd at $mariadbd (apt-get install mariadb-server)." >&2
fi

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ -x "$chromium" ]; then
  projects+=(browser)
elif [ "${CI:-}" = true ]; then
  echo "No Chromium at $chromium, and CI requires the browser test of /docs." >&2
  exit 1
else
  echo "*** The browser test of /docs did NOT run: no Chromium at $chromium (apt-get install chromium)." >&2
fi

npx jest --selectProjects "${projects[@]}" "$@"

echo "Contract run: the HTTP tests again, through prism proxy --errors."
npm run -s test:contract
