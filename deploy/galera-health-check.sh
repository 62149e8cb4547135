#!/bin/sh
# HAProxy's health check of a MariaDB Galera node (`option external-check`): exits 0 while the
# node may take the service's connections, 1 otherwise, and then prints why on standard error
# (HAProxy's output: the journal under systemd). HAProxy passes the server's address and port as
# the third and fourth arguments, and runs the script with an empty environment.
#
# A node serves when it is in the primary component, ready, and Synced (wsrep_local_state 4).
# A donor (state 2) serves only when its state transfer does not block it: mariabackup. An rsync
# or mysqldump donor is read-locked for the copy, and connections sent to it hang.
#
# It logs in with the [client] user and password of a MariaDB option file: GALERA_CHECK_OPTIONS
# when set (running it by hand), otherwise galera-health-check.cnf beside the path HAProxy runs
# (GALERA_CHECK: install or link the script outside the repository, the option file beside it,
# readable by haproxy only). The user needs no privilege: deploy/galera/README.md creates it.
host=$3
port=$4
options=${GALERA_CHECK_OPTIONS:-$(dirname "$0")/galera-health-check.cnf}
if [ ! -r "$options" ]; then
  echo "galera-health-check: $host:$port: cannot read the option file $options" >&2
  exit 1
fi
state=$(mariadb --defaults-extra-file="$options" --host="$host" --port="$port" \
  --connect-timeout=1 --batch --skip-column-names -e "SELECT
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS'),
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_READY'),
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'),
  @@wsrep_sst_method" 2>&1)
if [ $? -ne 0 ]; then
  echo "galera-health-check: $host:$port: $(echo "$state" | head -n 1)" >&2
  exit 1
fi
# Tab-separated: cluster status, ready, local state, state transfer method.
set -- $state
[ "$1" = Primary ] && [ "$2" = ON ] && [ "$3" = 4 ] && exit 0
[ "$1" = Primary ] && [ "$2" = ON ] && [ "$3" = 2 ] && [ "$4" = mariabackup ] && exit 0
echo "galera-health-check: $host:$port: not serving: cluster status $1, ready $2, local state $3 (4 is Synced), state transfer $4" >&2
exit 1
