//! The inbox in the user's own SQL database (PostgreSQL, SQLite): the spec's "persist and
//! return success", then process later. A receiver in inbox mode verifies a delivery, inserts it
//! here (the row is also its dedup record) and answers 2xx at once, however long the handler
//! takes; a worker ([`crate::machine::InboxWorker`]) claims due entries, runs the handler and
//! marks each done **in the transaction that holds the handler's effect**, so an effect commits
//! exactly once even when a worker is killed at any step.
//!
//! Sans I/O like [`super::SqlDedup`]: these are the statements and what their results mean; each
//! language runs them with its driver. One row per delivery key:
//!
//! | column | meaning |
//! |---|---|
//! | `inbox_key` | the delivery key ([`super::delivery_key`]), primary key |
//! | `delivery_id`, `event`, `body` | the verified delivery: its `Service-Webhook-Id`, event name and raw JSON body |
//! | `state` | `pending`, `done` or `poison` |
//! | `attempts` | handler runs started (a claim counts one before the handler runs, so a worker killed mid-handler still counts) |
//! | `due_at` | pending: when it may be claimed (a claim moves it a lease ahead); done: when the row expires |
//! | `received_at`, `last_error` | when it arrived; the last handler failure |
//!
//! | step | where | statement |
//! |---|---|---|
//! | enqueue | the receiver, autocommit | `INSERT … ON CONFLICT DO NOTHING`: 1 row new, 0 a duplicate (both answered 2xx) |
//! | claim | the worker, autocommit | `UPDATE … SET attempts + 1, due_at = now + lease WHERE inbox_key = (the oldest due, FOR UPDATE SKIP LOCKED on PostgreSQL) RETURNING …` |
//! | begin | opens the handler's transaction | `BEGIN` (`BEGIN IMMEDIATE` on SQLite) |
//! | mark done | **inside** the transaction, after the effect | `UPDATE … SET state = 'done' WHERE inbox_key AND attempts = the claim's AND state = 'pending'`: 0 rows means another worker claimed it since (roll back) |
//! | commit, rollback | | `COMMIT`, `ROLLBACK` |
//! | settle | autocommit, after a failure | `UPDATE … SET due_at = now + backoff (or state 'poison'), last_error WHERE … attempts = the claim's` |
//! | poisoned, retry | operators | list the poison entries; put one back to pending with no attempts |
//! | lookup | delivery recovery | `SELECT state`: no row new, `done` done, else in progress (received, not yet processed) |
//! | purge | now and then | delete done rows past their TTL |

use super::redis::store_key;
use super::{ClaimState, ParamStyle, SqlDedup, SqlDialect, SqlStatement};
use crate::ArgumentError;

/// The inbox table name when none is given.
pub const DEFAULT_INBOX_TABLE: &str = "royaltykit_inbox";
/// Default handler runs of one entry before it is set aside as poison.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// Largest body kept, in bytes: the spec's webhook payload limit (256 KB).
pub const MAX_INBOX_BODY_BYTES: usize = 256 * 1024;
/// The longest `last_error` kept, in bytes.
pub const MAX_ERROR_BYTES: usize = 1024;
/// The most poison entries one listing returns.
pub const MAX_POISON_LISTED: u32 = 1000;
/// Poison entries a listing returns when the caller gives no limit.
pub const DEFAULT_POISON_LISTED: u32 = 100;

/// The `last_error` an inbox keeps for a failed handler run, the same in every language: the
/// error's kind (its class or name) and message as `Kind: message`, the kind alone when the
/// message is empty, the message alone when the kind is; cut to [`MAX_ERROR_BYTES`] on a
/// character boundary.
pub fn handler_error_text(kind: &str, message: &str) -> String {
    let text = match (kind.trim(), message.trim()) {
        ("", message) => message.to_owned(),
        (kind, "") => kind.to_owned(),
        (kind, message) => format!("{kind}: {message}"),
    };
    cut(&text, MAX_ERROR_BYTES).to_owned()
}

record! { from_py;
/// An entry a claim returned (SQL or Redis), what the worker ([`crate::machine::InboxWorker`]) runs.
/// Read back from its JSON (camelCase) too: Node reports a claimed entry that way.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct InboxEntry {
    /// Its delivery key.
    pub key: String,
    /// Its `Service-Webhook-Id`.
    pub delivery_id: String,
    /// Its event name, as sent.
    pub event: String,
    /// The delivery's raw JSON body.
    pub body: String,
    /// Handler runs started, this one included.
    pub attempts: u32,
}
}

/// The SQL inbox protocol for one table: dialect, placeholders, lease and time-to-live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlInbox {
    /// The table, dialect, placeholders, TTL and lease, checked as the dedup table's are.
    sql: SqlDedup,
    table: String,
    ttl: i64,
    lease: i64,
}

/// What every inbox checks of a delivery it persists: a delivery id, and a body no larger than
/// [`MAX_INBOX_BODY_BYTES`].
pub(super) fn check_delivery(delivery_id: &str, body: &str) -> Result<(), ArgumentError> {
    if delivery_id.is_empty() {
        return Err(ArgumentError::new("delivery_id", "must not be empty"));
    }
    if body.len() > MAX_INBOX_BODY_BYTES {
        return Err(ArgumentError::new(
            "body",
            format!(
                "{} bytes is more than a delivery holds ({MAX_INBOX_BODY_BYTES})",
                body.len()
            ),
        ));
    }
    Ok(())
}

/// `text` cut to at most `max` bytes, on a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
}

impl SqlInbox {
    /// A protocol with the defaults for values not given: [`DEFAULT_INBOX_TABLE`], done rows
    /// kept for the dedup window's TTL (so a redelivery of a processed delivery is still a
    /// duplicate), and the dedup lease (how long a claimed entry is held before another worker
    /// may take it: keep the handler shorter). Promises `invalid_argument` for a table that is
    /// not a plain identifier, a TTL outside 1 s to 10 years, or a lease outside 1 s to the TTL.
    pub fn new(
        dialect: SqlDialect,
        style: ParamStyle,
        table: Option<&str>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Self, ArgumentError> {
        let sql = SqlDedup::new(
            dialect,
            style,
            Some(table.unwrap_or(DEFAULT_INBOX_TABLE)),
            ttl_seconds,
            lease_seconds,
        )?;
        let (ttl, lease) = sql.ttl_and_lease();
        Ok(Self {
            table: sql.table().to_owned(),
            sql,
            ttl,
            lease,
        })
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// How long a claim holds an entry, in seconds.
    pub fn lease_seconds(&self) -> i64 {
        self.lease
    }

    fn statement(&self, sql: &str, args: Vec<String>) -> SqlStatement {
        self.sql.statement(sql, args)
    }

    /// The statements creating the table and its index when missing (idempotent).
    pub fn schema(&self) -> Vec<String> {
        let t = &self.table;
        let index = t.replace('.', "_");
        vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {t} (inbox_key TEXT PRIMARY KEY, delivery_id TEXT NOT NULL, \
                 event TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, attempts BIGINT NOT NULL, \
                 due_at BIGINT NOT NULL, received_at BIGINT NOT NULL, last_error TEXT)"
            ),
            format!("CREATE INDEX IF NOT EXISTS {index}_due ON {t} (state, due_at)"),
        ]
    }

    /// The insert of a verified delivery at `now` (autocommit): `key` its delivery key,
    /// `delivery_id` its `Service-Webhook-Id`, `event` its event name, `body` its raw JSON body.
    /// Read the count of inserted rows with [`SqlInbox::enqueue_reply`]. Promises
    /// `invalid_argument` for a bad key, a body over [`MAX_INBOX_BODY_BYTES`], or an empty
    /// delivery id.
    pub fn enqueue(
        &self,
        key: &str,
        delivery_id: &str,
        event: &str,
        body: &str,
        now: i64,
    ) -> Result<SqlStatement, ArgumentError> {
        store_key(key)?;
        check_delivery(delivery_id, body)?;
        let sql = format!(
            "INSERT INTO {} (inbox_key, delivery_id, event, body, state, attempts, due_at, received_at, last_error) \
             VALUES (?, ?, ?, ?, 'pending', 0, {now}, {now}, NULL) ON CONFLICT (inbox_key) DO NOTHING",
            self.table
        );
        Ok(self.statement(
            &sql,
            vec![
                key.to_owned(),
                cut(delivery_id, super::MAX_NAME_BYTES).to_owned(),
                cut(event, super::MAX_NAME_BYTES).to_owned(),
                body.to_owned(),
            ],
        ))
    }

    /// What the insert changed: `true` for a new entry, `false` for a delivery already in the
    /// inbox (a redelivery: answer 2xx all the same).
    pub fn enqueue_reply(rows: u64) -> bool {
        rows > 0
    }

    /// The claim of the oldest due entry at `now` (autocommit): it counts an attempt and holds
    /// the entry for the lease, returning one row of five columns — `inbox_key`, `delivery_id`,
    /// `event`, `body`, `attempts` — or none when nothing is due.
    pub fn claim(&self, now: i64) -> SqlStatement {
        let t = &self.table;
        let until = now.saturating_add(self.lease);
        let lock = match self.sql.dialect() {
            SqlDialect::Postgres => " FOR UPDATE SKIP LOCKED",
            SqlDialect::Sqlite => "",
        };
        let sql = format!(
            "UPDATE {t} SET attempts = attempts + 1, due_at = {until} WHERE inbox_key = \
             (SELECT inbox_key FROM {t} WHERE state = 'pending' AND due_at <= {now} \
             ORDER BY due_at, received_at LIMIT 1{lock}) AND state = 'pending' \
             RETURNING inbox_key, delivery_id, event, body, attempts"
        );
        self.statement(&sql, Vec::new())
    }

    /// The statement opening the handler's transaction (`BEGIN`; `BEGIN IMMEDIATE` on SQLite).
    pub fn begin(&self) -> &'static str {
        self.sql.begin()
    }

    /// The statement committing the handler's transaction ([`SqlDedup::commit`]).
    pub fn commit(&self) -> &'static str {
        self.sql.commit()
    }

    /// The statement rolling the handler's transaction back ([`SqlDedup::rollback`]).
    pub fn rollback(&self) -> &'static str {
        self.sql.rollback()
    }

    /// The mark of `key` done by the claim that counted `attempts`, run **inside the handler's
    /// transaction** at `now`; the row is kept for the TTL as the delivery's dedup record. Read
    /// its count of changed rows with [`SqlInbox::guarded_reply`]. Promises `invalid_argument`
    /// for a bad key.
    pub fn mark_done(
        &self,
        key: &str,
        attempts: u32,
        now: i64,
    ) -> Result<SqlStatement, ArgumentError> {
        let until = now.saturating_add(self.ttl);
        let sql = format!(
            "UPDATE {} SET state = 'done', due_at = {until}, last_error = NULL \
             WHERE inbox_key = ? AND attempts = {attempts} AND state = 'pending'",
            self.table
        );
        Ok(self.statement(&sql, vec![store_key(key)?.to_owned()]))
    }

    /// What a guarded statement changed: `true` for one row (this claim), `false` for none
    /// (another worker claimed the entry after this claim's lease ran out: roll back).
    pub fn guarded_reply(rows: u64) -> bool {
        rows == 1
    }

    /// The settling of a failed attempt of `key` (the claim that counted `attempts`), at `now`,
    /// autocommit after the rollback: pending again at `retry_at`, or `poison` (no more
    /// attempts), with `error` (cut to [`MAX_ERROR_BYTES`]). Promises `invalid_argument` for a
    /// bad key.
    pub fn settle(
        &self,
        key: &str,
        attempts: u32,
        poison: bool,
        retry_at: i64,
        error: &str,
    ) -> Result<SqlStatement, ArgumentError> {
        let state = if poison { "poison" } else { "pending" };
        let sql = format!(
            "UPDATE {} SET state = '{state}', due_at = {retry_at}, last_error = ? \
             WHERE inbox_key = ? AND attempts = {attempts} AND state = 'pending'",
            self.table
        );
        Ok(self.statement(
            &sql,
            vec![
                cut(error, MAX_ERROR_BYTES).to_owned(),
                store_key(key)?.to_owned(),
            ],
        ))
    }

    /// The listing of poison entries, oldest first, at most `limit` (1 to
    /// [`MAX_POISON_LISTED`]): six columns — `inbox_key`, `delivery_id`, `event`, `attempts`,
    /// `last_error`, `received_at`. Promises `invalid_argument` for a limit out of range.
    pub fn poisoned(&self, limit: u32) -> Result<SqlStatement, ArgumentError> {
        if !(1..=MAX_POISON_LISTED).contains(&limit) {
            return Err(ArgumentError::new(
                "limit",
                format!("must be 1 to {MAX_POISON_LISTED}, got {limit}"),
            ));
        }
        let sql = format!(
            "SELECT inbox_key, delivery_id, event, attempts, last_error, received_at FROM {} \
             WHERE state = 'poison' ORDER BY received_at, inbox_key LIMIT {limit}",
            self.table
        );
        Ok(self.statement(&sql, Vec::new()))
    }

    /// The statement putting a poison entry back to pending at `now` with no attempts counted
    /// (an operator fixed the cause). One row changed: retried; none: not a poison entry.
    /// Promises `invalid_argument` for a bad key.
    pub fn retry(&self, key: &str, now: i64) -> Result<SqlStatement, ArgumentError> {
        let sql = format!(
            "UPDATE {} SET state = 'pending', attempts = 0, due_at = {now}, last_error = NULL \
             WHERE inbox_key = ? AND state = 'poison'",
            self.table
        );
        Ok(self.statement(&sql, vec![store_key(key)?.to_owned()]))
    }

    /// The read-only lookup of `key` (delivery recovery): one column `state`, or no row. Read
    /// it with [`SqlInbox::lookup_reply`]. Promises `invalid_argument` for a bad key.
    pub fn lookup(&self, key: &str) -> Result<SqlStatement, ArgumentError> {
        let sql = format!("SELECT state FROM {} WHERE inbox_key = ?", self.table);
        Ok(self.statement(&sql, vec![store_key(key)?.to_owned()]))
    }

    /// What a lookup means: no row `new` (never received), `done` processed, anything else
    /// (`pending`, `poison`) `in_progress`: received, so a replay would not help.
    pub fn lookup_reply(state: Option<&str>) -> ClaimState {
        match state {
            None => ClaimState::New,
            Some("done") => ClaimState::Done,
            Some(_) => ClaimState::InProgress,
        }
    }

    /// The count of entries by state: rows of two columns, `state` and its count.
    pub fn counts(&self) -> SqlStatement {
        let sql = format!(
            "SELECT state, COUNT(*) FROM {} GROUP BY state ORDER BY state",
            self.table
        );
        self.statement(&sql, Vec::new())
    }

    /// The statement deleting done entries past their TTL at `now`. Run it now and then.
    pub fn purge(&self, now: i64) -> SqlStatement {
        let sql = format!(
            "DELETE FROM {} WHERE state = 'done' AND due_at <= {now}",
            self.table
        );
        self.statement(&sql, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_follow_dialect_and_style() {
        let pg = SqlInbox::new(
            SqlDialect::Postgres,
            ParamStyle::Dollar,
            None,
            Some(100),
            Some(30),
        )
        .unwrap();
        let claim = pg.claim(1000);
        assert!(claim.sql.contains("due_at = 1030"), "{}", claim.sql);
        assert!(
            claim.sql.contains("FOR UPDATE SKIP LOCKED"),
            "{}",
            claim.sql
        );
        let settle = pg.settle("k", 2, false, 1005, "boom").unwrap();
        assert!(settle
            .sql
            .contains("last_error = $1 WHERE inbox_key = $2 AND attempts = 2"));
        assert_eq!(settle.args, vec!["boom".to_owned(), "k".to_owned()]);
        let lite = SqlInbox::new(
            SqlDialect::Sqlite,
            ParamStyle::Qmark,
            Some("app.inbox"),
            None,
            None,
        )
        .unwrap();
        assert!(!lite.claim(1).sql.contains("SKIP LOCKED"));
        assert_eq!(lite.begin(), "BEGIN IMMEDIATE");
        assert!(lite.schema()[1].contains("app_inbox_due ON app.inbox"));
        assert!(SqlInbox::new(
            SqlDialect::Sqlite,
            ParamStyle::Qmark,
            Some("x;drop"),
            None,
            None
        )
        .is_err());
        let big = "x".repeat(MAX_INBOX_BODY_BYTES + 1);
        assert!(lite.enqueue("k", "d", "e", &big, 1).is_err());
        assert!(lite.poisoned(0).is_err() && lite.poisoned(10).is_ok());
        assert_eq!(SqlInbox::lookup_reply(None), ClaimState::New);
        assert_eq!(
            SqlInbox::lookup_reply(Some("poison")),
            ClaimState::InProgress
        );
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(handler_error_text("ValueError", "bad"), "ValueError: bad");
        assert_eq!(handler_error_text("TimeoutError", " "), "TimeoutError");
        assert_eq!(handler_error_text("", "boom"), "boom");
        assert_eq!(
            handler_error_text("E", &"é".repeat(MAX_ERROR_BYTES)).len(),
            MAX_ERROR_BYTES - 1
        );
    }
}
