#!/usr/bin/env bash
# The whole suite: the generated types must match the document and the document must pass its
# linters; then every test runs on SQLite and on MySQL, the client kit's and the README example's
# pacts are written and verified with verify-pact, and the HTTP tests that use the typed client
# run once more through Prism's validating proxy. Without a MySQL server the MySQL half is reported as not run, except
# in CI (CI=true), where it must run; the same goes for promtool's check of the alert rules,
# for the browser test of /docs without Chromium, for the database crash test without a mariadbd of its own to kill, and for the
# Galera cluster tests without galera-4, mariadb-backup, socat and haproxy.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run -s check:generated
npm run -s lint   # type check (src and tests, against the generated types) and Spectral
npm run -s build  # the CLI tests run the compiled entry points, as npm run does
# API versions: the older versions' documents are made from the newest and the change modules
# (src/versions), and each released version's is as released, but for the allow-list.
npm run -s versions -- check
npm run -s versions -- gate >/dev/null

# The Prometheus alert rules: promtool checks them and runs their unit tests, and checks the
# Grafana dashboard's queries as rules (the jest tests check that every metric they name is in a
# real scrape). Without promtool this is reported as not run, except in CI, where it fails.
promtool="${PROMTOOL_PATH:-promtool}"
if command -v "$promtool" >/dev/null; then
  "$promtool" check rules deploy/prometheus/alerts.yml >/dev/null
  "$promtool" test rules deploy/prometheus/alerts.test.yml >/dev/null
  dashboard_rules=$(mktemp)
  node test/support/dashboard-as-rules.js >"$dashboard_rules"
  "$promtool" check rules "$dashboard_rules" >/dev/null
  rm "$dashboard_rules"
elif [ "${CI:-}" = true ]; then
  echo "The alert rules need promtool to be checked, which is missing, and CI requires it." >&2
  exit 1
else
  echo "*** The alert rules and the dashboard's queries were NOT checked by promtool: apt-get install prometheus, or set PROMTOOL_PATH." >&2
fi

projects=(sqlite)

# Adds a jest project when what it needs is here; otherwise says plainly that it did not run,
# or, in CI, fails.   include PROJECT "WHAT IT NEEDS" "HOW TO GET IT" CHECK...
include() {
  local project=$1 needs=$2 remedy=$3
  shift 3
  if "$@"; then
    projects+=("$project")
  elif [ "${CI:-}" = true ]; then
    echo "The $project tests need $needs, which is missing, and CI requires them." >&2
    exit 1
  else
    echo "*** The $project tests did NOT run: they need $needs. $remedy" >&2
  fi
}

mysql_url="${TEST_MYSQL_URL:-mysql://root@127.0.0.1:3306/}"
redis_url="${TEST_REDIS_URL:-redis://127.0.0.1:6379}"
servers_answer() {
  node -e '
    const url = new URL(process.argv[1]);
    require("mysql2/promise").createConnection({ host: url.hostname, port: Number(url.port || 3306),
      user: decodeURIComponent(url.username), password: decodeURIComponent(url.password), connectTimeout: 3000 })
    .then((c) => c.end(), () => process.exit(1));' "$mysql_url" &&
  node -e '
    const client = require("redis").createClient({ url: process.argv[1], socket: { connectTimeout: 3000, reconnectStrategy: false } });
    client.on("error", () => {});
    client.connect().then(() => client.quit(), () => process.exit(1));' "$redis_url"
}
mariadbd="${MARIADBD_PATH:-/usr/sbin/mariadbd}"
mariadb_installable() { [ -x "$mariadbd" ] && command -v mariadb-install-db >/dev/null; }
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
galera="${GALERA_PROVIDER_PATH:-/usr/lib/galera/libgalera_smm.so}"
# The cluster tests run three mariadbd nodes of their own as the mysql user (Galera's state
# transfer writes the data directory as that user), so they start as root, with HAProxy in front.
galera_runnable() {
  [ "$(id -u)" = 0 ] && mariadb_installable && [ -r "$galera" ] && id mysql >/dev/null 2>&1 &&
    command -v mariabackup >/dev/null && command -v socat >/dev/null && command -v "${HAPROXY_PATH:-haproxy}" >/dev/null
}

# The mysql project holds the tests that need local servers: MySQL, and Redis for shared rate limits.
include mysql "MySQL at $mysql_url and Redis at $redis_url" \
  "Point TEST_MYSQL_URL (a user that may create databases) and TEST_REDIS_URL at them." servers_answer
include crash "a mariadbd of their own to kill ($mariadbd)" "apt-get install mariadb-server, or set MARIADBD_PATH." mariadb_installable
include browser "Chromium at $chromium" "apt-get install chromium, or set CHROMIUM_PATH." test -x "$chromium"
include cluster "a MariaDB Galera cluster of their own (root, to run nodes as the mysql user; galera-4 at $galera, mariabackup, socat, haproxy, $mariadbd)" \
  "Run as root; apt-get install galera-4 mariadb-backup socat haproxy mariadb-server." galera_runnable

# A part of the suite (the run is given arguments): jest over the projects with them, then the
# contract run.
if [ $# -gt 0 ]; then
  npx jest --selectProjects "${projects[@]}" "$@"
  echo "Contract run: the HTTP tests that use the typed client again, through prism proxy --errors."
  npm run -s test:contract
  exit 0
fi

has() { [[ " ${projects[*]} " == *" $1 "* ]]; }

# Each jest run keeps its results as JSON too, for the digest of failures printed last.
results=$(mktemp -d)
jest_run() {
  local name=$1
  shift
  npx jest --json --outputFile "$results/$name.json" "$@"
}

# The whole suite runs in two lanes of about the same length, one a core: most tests wait on
# timers, child processes and servers rather than compute. This lane is MySQL's (the mysql, crash
# and browser projects, LIBRARY_SHIMS=off, the pacts); the other runs the cluster tests (one file
# at a time, as each runs a cluster of its own), the sqlite project and the contract run, and its
# output is printed once both are done.
first_lane() {
  local first=()
  for project in mysql crash browser; do has "$project" && first+=("$project"); done
  if [ ${#first[@]} -gt 0 ]; then jest_run first --selectProjects "${first[@]}"; fi

  # The mysql project's tests once more with LIBRARY_SHIMS=off, the libraries' own paths
  # (src/db/driver/README.md, src/http/shims/README.md), where the switch changes what runs: the
  # tests that send every operation and its refusals (routing, parsing, validation), and those of
  # writes (transactions: requests' changes, event numbering, the webhook worker's claims and
  # outcomes, with conflicts, outages and crashes part-way). The others test what no shim touches
  # (refusals before routing, caps, limits, long polls, DNS and the address guard, logs and
  # metrics, query plans, migrations) or one side directly, and would only repeat the first run.
  if has mysql; then
    echo "Library shims off: the mysql project's routing and transactions again, with LIBRARY_SHIMS=off."
    LIBRARY_SHIMS=off jest_run shims-off --selectProjects mysql --runTestsByPath \
      test/api/{projects,tasks,task-lists,events,service-index,authentication,large-pages,text,older-versions}.test.ts \
      test/api/{errors,hostile-bodies,unparsable-requests,json-top-level-keys,response-bodies,problem-pages}.test.ts \
      test/api/{conditional-requests,idempotency,idempotency-crash,idempotency-in-progress.mysql}.test.ts \
      test/api/{webhooks,webhooks-fanout,webhook-fences,webhook-planning,webhook-planning-crash,webhooks-crash}.test.ts \
      test/api/{events-instances,webhooks-instances,database-outage}.mysql.test.ts test/api/database-error-log.test.ts
  fi

  # The client kit's Pact consumer tests and the README's example write their pacts, verify-pact
  # verifies them against a sandbox of its own and check-pact against the document: the kit and
  # the service cannot drift.
  echo "Pacts: the client kit's and the README example's consumer tests, then verify-pact and check-pact over their pacts."
  local pacts
  pacts=$(mktemp -d)
  PACT_DIR="$pacts" jest_run pact --selectProjects pact
  npm run -s contract -- verify-pact "$pacts"
  npm run -s contract -- check-pact "$pacts"
  rm -rf "$pacts"
}

second_lane() {
  if has cluster; then jest_run cluster --selectProjects cluster; fi
  jest_run sqlite --selectProjects sqlite
  echo "Contract run: the HTTP tests that use the typed client again, through prism proxy --errors."
  npm run -s test:contract -- --json --outputFile "$results/contract.json"
}

second_log=$(mktemp)
echo "The cluster tests, the sqlite project and the contract run go in a second lane, beside this one; its output follows."
second_lane >"$second_log" 2>&1 &
second_pid=$!
# Each lane stops at its first failure (errexit holds in a background job, not left of a ||).
first_lane &
first_pid=$!
first_status=0
wait "$first_pid" || first_status=$?
second_status=0
wait "$second_pid" || second_status=$?
echo "The second lane: the cluster tests, the sqlite project and the contract run."
cat "$second_log"
rm -f "$second_log"
node test/failure-digest.js "$results"/*.json
rm -rf "$results"
[ "$first_status" = 0 ] && [ "$second_status" = 0 ]
