#!/bin/sh
# HAProxy's health check of a MariaDB Galera node (`option external-check`): exits 0 while the
# node may take the service's connections, 1 otherwise. HAProxy passes the server's address and
# port as the third and fourth arguments.
#
# A node serves when it is in the primary component, ready, and Synced (wsrep_local_state 4).
# A donor (state 2) serves only when its state transfer does not block it: mariabackup. An rsync
# or mysqldump donor is read-locked for the copy, and connections sent to it hang.
#
# It logs in as GALERA_CHECK_USER (default root, no password, as the tests' nodes) unless a
# MariaDB option file galera-health-check.cnf beside this script gives a [client] user and
# password: a user with no privileges at all may read these status variables.
host=$3
port=$4
here=$(dirname "$0")
set -- --host="$host" --port="$port" --connect-timeout=1 --batch --skip-column-names
if [ -r "$here/galera-health-check.cnf" ]; then
  set -- --defaults-extra-file="$here/galera-health-check.cnf" "$@"
else
  set -- "$@" --user="${GALERA_CHECK_USER:-root}"
fi
state=$(mariadb "$@" -e "SELECT
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS'),
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_READY'),
  (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE'),
  @@wsrep_sst_method" 2>/dev/null) || exit 1
# Tab-separated: cluster status, ready, local state, state transfer method.
set -- $state
[ "$1" = Primary ] && [ "$2" = ON ] || exit 1
[ "$3" = 4 ] && exit 0
[ "$3" = 2 ] && [ "$4" = mariabackup ] && exit 0
exit 1
