"""The libpq settings of every Loopline connection to PostgreSQL: no call waits forever.

A connection attempt gives up after `connect_timeout`; TCP keepalives and `tcp_user_timeout` notice
a server that is gone (unplugged, crashed host) instead of waiting on its socket; the server ends a
statement after `statement_timeout` and a client that went quiet inside a transaction after
`idle_in_transaction_session_timeout`, so a stuck process cannot hold table locks. A server that
is alive but stopped (SIGSTOP) still answers keepalives: the leader's watchdog (runtime/leading.py) is
the last line there.
"""

from __future__ import annotations

STATEMENT_TIMEOUT_MS = 60_000

SESSION = {
    "connect_timeout": "10",
    "keepalives": "1",
    "keepalives_idle": "10",
    "keepalives_interval": "5",
    "keepalives_count": "3",
    "tcp_user_timeout": "30000",
    "options": f"-c statement_timeout={STATEMENT_TIMEOUT_MS} -c idle_in_transaction_session_timeout=60000",
}

# Waiting for a lock another live process holds for a whole scheduler tick is not a hang.
LOCK_WAIT_TIMEOUT_MS = 600_000
