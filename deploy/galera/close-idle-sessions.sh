#!/bin/sh
# Closes a user's sessions on one node, each only at a moment it is idle outside a transaction,
# and returns once none is left: the step between draining a node in HAProxy
# (`set server nodes/nodeN state drain`, so no new session reaches it) and stopping it, so that no
# statement is cut. (HAProxy's `shutdown sessions`, and maintenance with haproxy.cfg's
# on-marked-down shutdown-sessions, cut them at once: a request caught in its COMMIT then answers
# 503, its outcome unknown.) The service's pools replace each closed
# connection through HAProxy, on another node; a transaction whose connection closed after its
# BEGIN, before its COMMIT, runs again.
#
# Usage: close-idle-sessions.sh USER [mariadb client options for the node, e.g. --socket=...]
# Waits at most CLOSE_IDLE_SECONDS (default 60); exits 1, saying how many are left, past that.
user=$1
shift
deadline=$(($(date +%s) + ${CLOSE_IDLE_SECONDS:-60}))
while :; do
  # One statement on the node: each session is closed right after it is seen idle.
  left=$(mariadb "$@" --batch --skip-column-names <<SQL
DELIMITER //
BEGIN NOT ATOMIC
  FOR idle IN (
    SELECT id FROM information_schema.PROCESSLIST
    WHERE user = '$user' AND command = 'Sleep'
      AND id NOT IN (SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX)
  ) DO
    -- InnoDB refills INNODB_TRX only when nobody read it for a tenth of a second, so the list
    -- above may be old: a pause first, so that the read below sees the transactions open now.
    DO SLEEP(0.15);
    -- Seen idle again just before: a session that began a statement since is left for the next round.
    IF (SELECT command FROM information_schema.PROCESSLIST WHERE id = idle.id) = 'Sleep'
      AND idle.id NOT IN (SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX) THEN
      KILL CONNECTION idle.id;
    END IF;
  END FOR;
END//
DELIMITER ;
SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE user = '$user';
SQL
  ) || exit 1
  [ "$left" = 0 ] && exit 0
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "close-idle-sessions: $left sessions of $user still open" >&2
    exit 1
  fi
  sleep 0.2
done
