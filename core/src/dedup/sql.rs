//! The dedup contract in the user's own SQL database (PostgreSQL, SQLite), where the delivery is
//! marked processed **in the same transaction as the handler's effect**: either both commit or
//! neither does, so a crash, a failed commit or a killed process never applies an effect twice
//! nor loses one (exactly once, where the Redis and in-memory stores give at least once).
//!
//! Sans I/O like [`super::RedisDedup`]: this says which statement to run and what its result
//! means; each language's store runs them with that ecosystem's driver (psycopg, sqlite3, pg,
//! better-sqlite3, JDBC). Integers are written into the statement text (they are the core's
//! own numbers); the key and the claim token are bound as parameters.
//!
//! One row per dedup key in the table (default [`DEFAULT_SQL_TABLE`]): `state` is `claimed`
//! while a worker holds the key (`expires_at` = the claim's lease) and `done` once processed
//! (`expires_at` = the time-to-live); `token` is random per claim.
//!
//! | step | where | statement | result |
//! |---|---|---|---|
//! | claim | its own (autocommit) statement | `INSERT … ON CONFLICT (dedup_key) DO UPDATE … WHERE expires_at <= now RETURNING` | a row: new; none: then `state` |
//! | state | autocommit | `SELECT state …` | `done` → done; anything else or no row → in progress |
//! | begin | opens the handler's transaction | [`SqlDedup::begin`] | |
//! | mark done | **inside** the transaction, after the handler wrote its effect | `UPDATE … SET state = 'done' WHERE dedup_key AND token AND state = 'claimed'` | 1 row: this claim; 0: the lease ran out and another worker took the key (roll back) |
//! | release | autocommit, after a rollback | `DELETE … WHERE dedup_key AND token AND state = 'claimed'` | |
//! | purge | now and then | `DELETE … WHERE expires_at <= now` | |
//!
//! The mark comes last, just before the commit, so the row is locked only for that instant: a
//! redelivery claiming the key while the handler runs is answered `in_progress` at once rather
//! than waiting on the lock (in PostgreSQL any insert of a locked key waits). A worker whose
//! lease ran out and whose key another worker took finds its mark changing no row and rolls
//! back its effect: one of the two commits.

use super::redis::{claim_token_arg, store_key, ttl_and_lease};
use super::window::ClaimState;
use super::RedisDedup;
use crate::ArgumentError;

/// The table name when none is given.
pub const DEFAULT_SQL_TABLE: &str = "royaltykit_dedup";

string_enum! {
    /// The database a [`SqlDedup`] writes statements for.
    pub enum SqlDialect as "dialect" {
        /// PostgreSQL 9.5 or later.
        Postgres = "postgres",
        /// SQLite 3.35 or later (`RETURNING`).
        Sqlite = "sqlite",
    }
}

/// The oldest SQLite the stores run on (`major`, `minor`): 3.35 brought `RETURNING`.
pub const MIN_SQLITE_VERSION: (u32, u32) = (3, 35);

impl SqlDialect {
    /// The dialect of a database from what its driver reports: `product` its product name
    /// (JDBC's `databaseProductName`: `PostgreSQL`, `SQLite`; any case) and `version` its
    /// version (`3.45.1`; only SQLite's is read). Promises `invalid_argument` naming `version`
    /// for an SQLite older than 3.35 (`MIN_SQLITE_VERSION`) (or a version that does not start with
    /// `major.minor`), and naming `product` for any other database: the message says what is
    /// supported, so a caller can pass a dialect itself for a compatible database.
    pub fn detect(product: &str, version: &str) -> Result<Self, ArgumentError> {
        let product = product.trim();
        if product.eq_ignore_ascii_case("postgresql") || product.eq_ignore_ascii_case("postgres") {
            return Ok(Self::Postgres);
        }
        if !product.eq_ignore_ascii_case("sqlite") {
            return Err(ArgumentError::new(
                "product",
                format!(
                    "the SQL stores support PostgreSQL and SQLite, not {}: give the dialect to use a compatible database",
                    crate::text::quote(product)
                ),
            ));
        }
        let mut parts = version.trim().split('.').map(|p| {
            let digits = p.bytes().take_while(u8::is_ascii_digit).count();
            p[..digits].parse::<u32>().ok()
        });
        let (major, minor) = (parts.next().flatten(), parts.next().flatten());
        match (major, minor) {
            (Some(major), Some(minor)) if (major, minor) >= MIN_SQLITE_VERSION => Ok(Self::Sqlite),
            _ => Err(ArgumentError::new(
                "version",
                format!(
                    "SQLite {} is too old or unreadable: the SQL stores need {}.{} or later (RETURNING)",
                    crate::text::quote(version),
                    MIN_SQLITE_VERSION.0,
                    MIN_SQLITE_VERSION.1
                ),
            )),
        }
    }
}

string_enum! {
    /// How the driver writes a statement's parameters.
    pub enum ParamStyle as "param_style" {
        /// `?` (sqlite3, better-sqlite3, JDBC).
        Qmark = "qmark",
        /// `$1`, `$2`, … (node-postgres).
        Dollar = "dollar",
        /// `%s` (psycopg).
        Format = "format",
    }
}

/// One statement: its text and its parameters (all text), in order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(
    feature = "python",
    pyo3::pyclass(frozen, get_all, module = "royaltykit")
)]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct SqlStatement {
    /// The SQL text, with the driver's placeholders.
    pub sql: String,
    /// The values of its placeholders, in order.
    pub args: Vec<String>,
}

/// `sql` with its `?` placeholders written in `style`, and `args`.
fn render(style: ParamStyle, sql: &str, args: Vec<String>) -> SqlStatement {
    let sql = match style {
        ParamStyle::Qmark => sql.to_owned(),
        ParamStyle::Format => sql.replace('?', "%s"),
        ParamStyle::Dollar => {
            let mut out = String::with_capacity(sql.len() + 4);
            let mut n = 0;
            for c in sql.chars() {
                if c == '?' {
                    n += 1;
                    out.push('$');
                    out.push_str(&n.to_string());
                } else {
                    out.push(c);
                }
            }
            out
        }
    };
    SqlStatement { sql, args }
}

/// Whether `table` is a plain identifier, optionally schema-qualified (`schema.table`).
fn plain_identifier(table: &str) -> bool {
    let part = |p: &str| {
        let mut bytes = p.bytes();
        matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
            && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && p.len() <= 63
    };
    let parts: Vec<&str> = table.split('.').collect();
    parts.len() <= 2 && parts.into_iter().all(part)
}

/// The SQL dedup protocol for one table: dialect, placeholders, lease and time-to-live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlDedup {
    dialect: SqlDialect,
    style: ParamStyle,
    table: String,
    ttl: i64,
    lease: i64,
}

impl SqlDedup {
    /// A protocol with the defaults for values not given: [`DEFAULT_SQL_TABLE`], the dedup
    /// window's [`super::DEFAULT_DEDUP_TTL_SECONDS`] and [`super::DEFAULT_LEASE_SECONDS`]. Promises:
    /// `invalid_argument` for a table that is not a plain identifier (letters, digits and `_`,
    /// at most 63 bytes, optionally `schema.table`), a TTL outside 1 s to 10 years, or a lease
    /// outside 1 s to the TTL.
    pub fn new(
        dialect: SqlDialect,
        style: ParamStyle,
        table: Option<&str>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Self, ArgumentError> {
        let table = table.unwrap_or(DEFAULT_SQL_TABLE);
        if !plain_identifier(table) {
            return Err(ArgumentError::new(
                "table",
                "must be a plain identifier (letters, digits and _, at most 63 bytes, optionally schema.table)",
            ));
        }
        let (ttl, lease) = ttl_and_lease(ttl_seconds, lease_seconds)?;
        Ok(Self {
            dialect,
            style,
            table: table.to_owned(),
            ttl,
            lease,
        })
    }

    /// The dialect.
    pub fn dialect(&self) -> SqlDialect {
        self.dialect
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// `sql` with its `?` placeholders written in this protocol's style, and `args`.
    pub(super) fn statement(&self, sql: &str, args: Vec<String>) -> SqlStatement {
        render(self.style, sql, args)
    }

    /// The time-to-live and the lease, in seconds.
    pub(super) fn ttl_and_lease(&self) -> (i64, i64) {
        (self.ttl, self.lease)
    }

    fn key(key: &str) -> Result<String, ArgumentError> {
        store_key(key).map(str::to_owned)
    }

    fn token(token: &str) -> Result<String, ArgumentError> {
        claim_token_arg(token).map(str::to_owned)
    }

    /// A claim token from 16 random bytes of the host's RNG (as [`RedisDedup::claim_token`]).
    pub fn claim_token(random: [u8; 16]) -> String {
        RedisDedup::claim_token(random)
    }

    /// The statements creating the table and its index when missing (idempotent; run them once
    /// at start-up or in a migration).
    pub fn schema(&self) -> Vec<String> {
        let t = &self.table;
        let index = t.replace('.', "_");
        vec![
            format!(
                "CREATE TABLE IF NOT EXISTS {t} (dedup_key TEXT PRIMARY KEY, state TEXT NOT NULL, \
                 token TEXT NOT NULL, expires_at BIGINT NOT NULL)"
            ),
            format!("CREATE INDEX IF NOT EXISTS {index}_expires_at ON {t} (expires_at)"),
        ]
    }

    /// The claim of `key` by the worker holding `token`, at `now` (Unix seconds), run on its own
    /// (autocommit). It inserts the row, or takes over one whose lease or TTL has run out, and
    /// returns a row only then: read the count of returned rows with [`SqlDedup::claim_reply`].
    /// Promises `invalid_argument` for a bad key or token.
    pub fn claim(&self, key: &str, token: &str, now: i64) -> Result<SqlStatement, ArgumentError> {
        let t = &self.table;
        let until = now.saturating_add(self.lease);
        let sql = format!(
            "INSERT INTO {t} (dedup_key, state, token, expires_at) VALUES (?, 'claimed', ?, {until}) \
             ON CONFLICT (dedup_key) DO UPDATE SET state = 'claimed', token = excluded.token, \
             expires_at = excluded.expires_at WHERE {t}.expires_at <= {now} RETURNING dedup_key"
        );
        Ok(self.statement(&sql, vec![Self::key(key)?, Self::token(token)?]))
    }

    /// What the claim returned: `Some(New)` for a row; `None` for none (the key is taken: run
    /// [`SqlDedup::state`] and read it with [`SqlDedup::state_reply`]).
    pub fn claim_reply(rows: u64) -> Option<ClaimState> {
        (rows > 0).then_some(ClaimState::New)
    }

    /// The statement reading a taken key's `state` (one column, one row or none).
    pub fn state(&self, key: &str) -> Result<SqlStatement, ArgumentError> {
        let sql = format!("SELECT state FROM {} WHERE dedup_key = ?", self.table);
        Ok(self.statement(&sql, vec![Self::key(key)?]))
    }

    /// What a taken key's state means: `done` once processed; anything else — another worker's
    /// claim, or no row when that claim was released in between — is `in_progress` (the
    /// service redelivers and the next claim decides).
    pub fn state_reply(state: Option<&str>) -> ClaimState {
        if state == Some("done") {
            ClaimState::Done
        } else {
            ClaimState::InProgress
        }
    }

    /// The read-only lookup of `key`'s state at `now` (delivery recovery; autocommit): one
    /// column, a row only while the key is live (a claim within its lease, or done within the
    /// TTL). Read it with [`SqlDedup::lookup_reply`].
    pub fn lookup(&self, key: &str, now: i64) -> Result<SqlStatement, ArgumentError> {
        let sql = format!(
            "SELECT state FROM {} WHERE dedup_key = ? AND expires_at > {now}",
            self.table
        );
        Ok(self.statement(&sql, vec![Self::key(key)?]))
    }

    /// What a lookup returned: `done` for a processed key, `in_progress` for a live claim,
    /// `new` for no row (never seen, or expired) — unlike [`SqlDedup::state_reply`], which reads
    /// a missing row right after a failed claim.
    pub fn lookup_reply(state: Option<&str>) -> ClaimState {
        match state {
            None => ClaimState::New,
            Some("done") => ClaimState::Done,
            Some(_) => ClaimState::InProgress,
        }
    }

    /// The statement opening the handler's transaction: `BEGIN` on PostgreSQL, `BEGIN
    /// IMMEDIATE` on SQLite (it takes the write lock at once, so two writers never deadlock on
    /// the upgrade). A driver with its own transaction API may use that instead.
    pub fn begin(&self) -> &'static str {
        match self.dialect {
            SqlDialect::Postgres => "BEGIN",
            SqlDialect::Sqlite => "BEGIN IMMEDIATE",
        }
    }

    /// The statement committing the handler's transaction (`COMMIT`, in both dialects).
    pub fn commit(&self) -> &'static str {
        "COMMIT"
    }

    /// The statement rolling the handler's transaction back (`ROLLBACK`, in both dialects).
    pub fn rollback(&self) -> &'static str {
        "ROLLBACK"
    }

    /// The statement marking `key` processed by the worker holding `token`, run **inside the
    /// handler's transaction**: it sets `done` for the TTL from `now` only while the row holds
    /// this claim. Read its count of changed rows with [`SqlDedup::guarded_reply`].
    pub fn mark_done(
        &self,
        key: &str,
        token: &str,
        now: i64,
    ) -> Result<SqlStatement, ArgumentError> {
        let until = now.saturating_add(self.ttl);
        let sql = format!(
            "UPDATE {} SET state = 'done', expires_at = {until} \
             WHERE dedup_key = ? AND token = ? AND state = 'claimed'",
            self.table
        );
        Ok(self.statement(&sql, vec![Self::key(key)?, Self::token(token)?]))
    }

    /// What the guarded mark or release changed: `true` for one row (this claim), `false` for
    /// none (the claim's lease ran out and another worker took the key: roll back).
    pub fn guarded_reply(rows: u64) -> bool {
        rows == 1
    }

    /// The statement giving up the claim of `key` by the worker holding `token` (autocommit,
    /// after a rollback): it deletes the row only while it holds this claim, so a row marked
    /// done by a transaction that did commit is never removed.
    pub fn release(&self, key: &str, token: &str) -> Result<SqlStatement, ArgumentError> {
        let sql = format!(
            "DELETE FROM {} WHERE dedup_key = ? AND token = ? AND state = 'claimed'",
            self.table
        );
        Ok(self.statement(&sql, vec![Self::key(key)?, Self::token(token)?]))
    }

    /// The statement deleting rows expired at `now` (claims whose lease ran out, processed keys
    /// past their TTL). Run it now and then; correctness never depends on it.
    pub fn purge(&self, now: i64) -> SqlStatement {
        let sql = format!("DELETE FROM {} WHERE expires_at <= {now}", self.table);
        self.statement(&sql, Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialect_is_detected_from_the_driver_and_old_sqlite_refused() {
        for (product, version) in [
            ("PostgreSQL", "16.2"),
            ("postgres", ""),
            (" PostgreSQL ", "9.5"),
        ] {
            assert_eq!(
                SqlDialect::detect(product, version),
                Ok(SqlDialect::Postgres)
            );
        }
        for version in ["3.35.0", "3.45.1", "3.50", "4.0.0", " 3.35.5 "] {
            assert_eq!(
                SqlDialect::detect("SQLite", version),
                Ok(SqlDialect::Sqlite),
                "{version}"
            );
        }
        for version in ["3.34.1", "3.8.11", "2.99", "3", "", "x.y", "\u{0}"] {
            let e = SqlDialect::detect("sqlite", version).unwrap_err();
            assert_eq!(
                (e.code(), e.name),
                ("invalid_argument", "version"),
                "{version}"
            );
            assert!(e.reason.contains("3.35 or later"), "{}", e.reason);
        }
        let e = SqlDialect::detect("MySQL\nforged log line", "8.0").unwrap_err();
        assert_eq!(e.name, "product");
        assert!(
            e.reason.contains("PostgreSQL and SQLite") && !e.reason.contains('\n'),
            "{}",
            e.reason
        );
    }

    const TOKEN: &str = "0123456789abcdef";

    #[test]
    fn a_lookup_reads_only_live_rows_and_no_row_is_new() {
        let d = SqlDedup::new(SqlDialect::Postgres, ParamStyle::Dollar, None, None, None).unwrap();
        let l = d.lookup("dlv_1", 1000).unwrap();
        assert_eq!(
            l.sql,
            "SELECT state FROM royaltykit_dedup WHERE dedup_key = $1 AND expires_at > 1000"
        );
        assert_eq!(l.args, vec!["dlv_1".to_owned()]);
        assert_eq!(SqlDedup::lookup_reply(None), ClaimState::New);
        assert_eq!(SqlDedup::lookup_reply(Some("done")), ClaimState::Done);
        assert_eq!(
            SqlDedup::lookup_reply(Some("claimed")),
            ClaimState::InProgress
        );
        assert_eq!(RedisDedup::lookup_reply(None), ClaimState::New);
        assert_eq!(RedisDedup::lookup_reply(Some("done")), ClaimState::Done);
        assert_eq!(
            RedisDedup::lookup_reply(Some("tok")),
            ClaimState::InProgress
        );
    }

    #[test]
    fn placeholders_follow_the_style() {
        let q = SqlDedup::new(
            SqlDialect::Sqlite,
            ParamStyle::Qmark,
            None,
            Some(100),
            Some(5),
        )
        .unwrap();
        let d = SqlDedup::new(
            SqlDialect::Postgres,
            ParamStyle::Dollar,
            Some("app.seen"),
            None,
            None,
        )
        .unwrap();
        let f = SqlDedup::new(SqlDialect::Postgres, ParamStyle::Format, None, None, None).unwrap();
        let c = q.claim("dlv_1", TOKEN, 1000).unwrap();
        assert!(
            c.sql.contains("VALUES (?, 'claimed', ?, 1005)"),
            "{}",
            c.sql
        );
        assert!(
            c.sql.contains("WHERE royaltykit_dedup.expires_at <= 1000"),
            "{}",
            c.sql
        );
        assert_eq!(c.args, ["dlv_1", TOKEN]);
        let c = d.claim("dlv_1", TOKEN, 1000).unwrap();
        assert!(
            c.sql.starts_with("INSERT INTO app.seen ")
                && c.sql.contains("VALUES ($1, 'claimed', $2, 1060)"),
            "{}",
            c.sql
        );
        assert!(f
            .mark_done("k", TOKEN, 10)
            .unwrap()
            .sql
            .ends_with("WHERE dedup_key = %s AND token = %s AND state = 'claimed'"));
        assert!(q
            .mark_done("k", TOKEN, 10)
            .unwrap()
            .sql
            .contains("expires_at = 110 "));
        assert_eq!(q.purge(7).args.len(), 0);
        assert_eq!(q.begin(), "BEGIN IMMEDIATE");
        assert_eq!(d.begin(), "BEGIN");
        assert!(d.schema()[1].contains("app_seen_expires_at ON app.seen"));
    }

    #[test]
    fn replies_and_refusals() {
        assert_eq!(SqlDedup::claim_reply(1), Some(ClaimState::New));
        assert_eq!(SqlDedup::claim_reply(0), None);
        assert_eq!(SqlDedup::state_reply(Some("done")), ClaimState::Done);
        assert_eq!(
            SqlDedup::state_reply(Some("claimed")),
            ClaimState::InProgress
        );
        assert_eq!(SqlDedup::state_reply(None), ClaimState::InProgress);
        assert!(SqlDedup::guarded_reply(1));
        assert!(!SqlDedup::guarded_reply(0));
        let q = SqlDedup::new(SqlDialect::Sqlite, ParamStyle::Qmark, None, None, None).unwrap();
        assert!(q.claim("k", "short", 0).is_err());
        assert!(q.claim("", TOKEN, 0).is_err());
        for bad in [
            "t; DROP TABLE x",
            "a.b.c",
            "1abc",
            "",
            "x-y",
            &"t".repeat(64),
        ] {
            assert!(
                SqlDedup::new(SqlDialect::Sqlite, ParamStyle::Qmark, Some(bad), None, None)
                    .is_err(),
                "{bad}"
            );
        }
        assert!(SqlDedup::new(
            SqlDialect::Sqlite,
            ParamStyle::Qmark,
            None,
            Some(10),
            Some(11)
        )
        .is_err());
    }
}
