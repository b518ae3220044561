//! The SQL and Redis inboxes and their worker for Kotlin (`SqlInboxProtocol`,
//! `RedisInboxProtocol`, `InboxWorker`): conversions only. `JdbcInbox` (JdbcInbox.kt) runs the
//! statements over JDBC, `RedisInbox` (RedisInbox.kt) sends the commands through the host's Redis
//! client, and both drive the worker.

use crate::machine::{bound, lock};
use crate::Result;
use royaltykit::dedup::{
    self, ClaimState, InboxCounts, InboxPoisonEntry, ParamStyle, RedisInbox, SqlDialect, SqlInbox,
    SqlStatement,
};
use royaltykit::machine::{self, InboxEntry, InboxOptions, InboxStep};
use royaltykit::ArgumentError;
use std::sync::{Arc, Mutex};

/// A count of rows as JDBC gives it (an `Int` or a `Long`, never negative in practice).
fn rows(count: i64) -> u64 {
    u64::try_from(count).unwrap_or(0)
}

/// An attempt count as the core's number: anything outside `u32` is `invalid_argument`.
fn attempts_of(attempts: i64) -> Result<u32> {
    u32::try_from(attempts).map_err(|_| {
        ArgumentError::new(
            "attempts",
            format!("{attempts} is out of range (0 to {})", u32::MAX),
        )
        .into()
    })
}

/// The SQL inbox in the user's own database (PostgreSQL, SQLite): the statements to run (text
/// with the driver's placeholders, and the arguments) and what their results mean (the core's
/// `SqlInbox`). `JdbcInbox` (JdbcInbox.kt) runs them over a `javax.sql.DataSource`.
#[derive(uniffi::Object)]
pub struct SqlInboxProtocol(SqlInbox);

#[uniffi::export]
impl SqlInboxProtocol {
    /// Absent values are the core's defaults (table `royaltykit_inbox`, the dedup window's TTL
    /// for done rows, the dedup lease for claims). `invalid_argument` for a table that is not a
    /// plain identifier, a TTL outside 1 s to 10 years or a lease outside 1 s to the TTL.
    #[uniffi::constructor(default(table = None, ttl_seconds = None, lease_seconds = None))]
    pub fn new(
        dialect: SqlDialect,
        param_style: ParamStyle,
        table: Option<String>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(SqlInbox::new(
            dialect,
            param_style,
            table.as_deref(),
            ttl_seconds,
            lease_seconds,
        )?)))
    }

    /// The table's name.
    pub fn table(&self) -> String {
        self.0.table().to_owned()
    }

    /// How long a claim holds an entry, in seconds (keep the handler shorter).
    pub fn lease_seconds(&self) -> i64 {
        self.0.lease_seconds()
    }

    /// True for a new entry (1 row inserted), false for a delivery already in the inbox.
    pub fn enqueue_reply(&self, rows_inserted: i64) -> bool {
        SqlInbox::enqueue_reply(rows(rows_inserted))
    }

    /// The mark of `key` done by the claim that counted `attempts`, run inside the handler's
    /// transaction at `now`; read its count of changed rows with `guardedReply`.
    pub fn mark_done(&self, key: String, attempts: i64, now: i64) -> Result<SqlStatement> {
        Ok(self.0.mark_done(&key, attempts_of(attempts)?, now)?)
    }

    /// True for one changed row (this claim), false for none (another worker claimed the entry
    /// since: roll back).
    pub fn guarded_reply(&self, rows_changed: i64) -> bool {
        SqlInbox::guarded_reply(rows(rows_changed))
    }

    /// The settling of a failed attempt (autocommit, after the rollback): pending again at
    /// `retryAt`, or `poison`, with `error` (cut to the core's limit).
    pub fn settle(
        &self,
        key: String,
        attempts: i64,
        poison: bool,
        retry_at: i64,
        error: String,
    ) -> Result<SqlStatement> {
        Ok(self
            .0
            .settle(&key, attempts_of(attempts)?, poison, retry_at, &error)?)
    }

    /// The listing of poison entries, oldest first, at most `limit` (1 to 1000): six columns
    /// (`inbox_key`, `delivery_id`, `event`, `attempts`, `last_error`, `received_at`).
    pub fn poisoned(&self, limit: i64) -> Result<SqlStatement> {
        let limit = bound("limit", Some(limit), u32::MAX)?.unwrap_or(0);
        Ok(self.0.poisoned(limit)?)
    }

    /// What a lookup returned (null for no row): `NEW` never received, `DONE` processed,
    /// `IN_PROGRESS` received and not processed (pending or poison).
    pub fn lookup_reply(&self, state: Option<String>) -> ClaimState {
        SqlInbox::lookup_reply(state.as_deref())
    }
}

crate::generated::sql_inbox_protocol_methods!();

/// How many poison entries an inbox's `poisoned()` lists when no limit is given (the core's).
#[uniffi::export]
pub fn default_poison_listed() -> i64 {
    dedup::DEFAULT_POISON_LISTED.into()
}

/// The inbox on a Redis stream (the core's `RedisInbox`): the commands to send (argument lists:
/// `EVAL script numkeys keys… args…`, or `HGET`) and what their replies mean. Every reply is one
/// nil, integer or bulk string: pass it as text (integers in decimal, nil as null).
/// `RedisInbox` (RedisInbox.kt) sends them through the host's `RedisCommands`.
#[derive(uniffi::Object)]
pub struct RedisInboxProtocol(RedisInbox);

#[uniffi::export]
impl RedisInboxProtocol {
    /// Absent values are the core's defaults (prefix `{royaltykit:inbox}:`, a Redis Cluster hash
    /// tag; done entries kept for the dedup window's TTL; the dedup lease for claims).
    /// `invalid_argument` for an empty prefix or one over 256 bytes, a TTL outside 1 s to 10
    /// years or a lease outside 1 s to the TTL.
    #[uniffi::constructor(default(prefix = None, ttl_seconds = None, lease_seconds = None))]
    pub fn new(
        prefix: Option<String>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(RedisInbox::new(
            prefix.as_deref(),
            ttl_seconds,
            lease_seconds,
        )?)))
    }

    /// The key prefix.
    pub fn prefix(&self) -> String {
        self.0.prefix().to_owned()
    }

    /// How long a claim holds an entry, in seconds (keep the handler shorter).
    pub fn lease_seconds(&self) -> i64 {
        self.0.lease_seconds()
    }

    /// The command adding a verified delivery at `now`: `key` its delivery key, `deliveryId` its
    /// `Service-Webhook-Id`, `event` its event name, `body` its raw JSON body. Read the reply with
    /// `addedReply`. `invalid_argument` for a bad key, an empty delivery id or a body larger than
    /// a delivery holds.
    pub fn enqueue_command(
        &self,
        key: String,
        delivery_id: String,
        event: String,
        body: String,
        now: i64,
    ) -> Result<Vec<String>> {
        Ok(self
            .0
            .enqueue_command(&key, &delivery_id, &event, &body, now)?)
    }

    /// What an integer reply of enqueue, mark, settle or retry means: true for 1 (added, marked,
    /// settled, put back), false otherwise (a duplicate; not this claim; not poison).
    pub fn added_reply(&self, reply: Option<String>) -> bool {
        RedisInbox::added_reply(reply.as_deref())
    }

    /// The claim of one due entry at `now`; read the reply with `claimReply`.
    pub fn claim_command(&self, now: i64) -> Vec<String> {
        self.0.claim_command(now)
    }

    /// The entry a claim's reply holds, or null for nil (nothing due). `invalid_argument`
    /// (argument `reply`) for a reply of another shape.
    pub fn claim_reply(&self, reply: Option<String>) -> Result<Option<machine::InboxEntry>> {
        Ok(RedisInbox::claim_reply(reply.as_deref())?)
    }

    /// The mark of `key` done by the claim that counted `attempts`, at `now`; read the reply with
    /// `addedReply` (false: another worker claimed the entry after this claim's lease ran out).
    pub fn mark_done_command(&self, key: String, attempts: i64, now: i64) -> Result<Vec<String>> {
        Ok(self
            .0
            .mark_done_command(&key, attempts_of(attempts)?, now)?)
    }

    /// The settling of a failed attempt of `key` (the claim that counted `attempts`): pending
    /// again from `retryAt`, or `poison`, with `error` (cut to the core's limit). Reply:
    /// `addedReply`.
    pub fn settle_command(
        &self,
        key: String,
        attempts: i64,
        poison: bool,
        retry_at: i64,
        error: String,
    ) -> Result<Vec<String>> {
        Ok(self
            .0
            .settle_command(&key, attempts_of(attempts)?, poison, retry_at, &error)?)
    }

    /// The listing of poison entries, oldest first, at most `limit` (1 to 1000); read it with
    /// `poisonedReply`.
    pub fn poisoned_command(&self, limit: i64) -> Result<Vec<String>> {
        let limit = bound("limit", Some(limit), u32::MAX)?.unwrap_or(0);
        Ok(self.0.poisoned_command(limit)?)
    }

    /// The poison entries of a listing's reply. `invalid_argument` (argument `reply`) for a reply
    /// of another shape.
    pub fn poisoned_reply(&self, reply: Option<String>) -> Result<Vec<InboxPoisonEntry>> {
        Ok(RedisInbox::poisoned_reply(reply.as_deref())?)
    }

    /// The command putting a poison entry back to pending with no attempts counted. Reply:
    /// `addedReply` (false: not poison).
    pub fn retry_command(&self, key: String) -> Result<Vec<String>> {
        Ok(self.0.retry_command(&key)?)
    }

    /// The read-only lookup of `key` (delivery recovery): `HGET <entry> state`, read with
    /// `lookupReply`.
    pub fn lookup_command(&self, key: String) -> Result<Vec<String>> {
        Ok(self.0.lookup_command(&key)?)
    }

    /// What a lookup's reply means: `NEW` for nil (never received, or done and past its TTL),
    /// `DONE` processed, `IN_PROGRESS` received and not processed (pending or poison).
    pub fn lookup_reply(&self, reply: Option<String>) -> ClaimState {
        RedisInbox::lookup_reply(reply.as_deref())
    }

    /// The count of entries by state at `now`; read it with `countsReply`.
    pub fn counts_command(&self, now: i64) -> Vec<String> {
        self.0.counts_command(now)
    }

    /// The counts of a counts reply. `invalid_argument` (argument `reply`) for a reply of another
    /// shape.
    pub fn counts_reply(&self, reply: Option<String>) -> Result<InboxCounts> {
        Ok(RedisInbox::counts_reply(reply.as_deref())?)
    }

    /// The command forgetting done entries past their TTL at `now`; its integer reply is how many.
    pub fn purge_command(&self, now: i64) -> Vec<String> {
        self.0.purge_command(now)
    }
}

/// The worker of an inbox as a machine (the core's `machine::InboxWorker`: backoff, poison and
/// the guards are all decided there). Ask `next()`, perform the step with the store and the
/// handler, report the outcome (which returns the next step), until `Drained` or for as long as
/// the host runs it (it may stop at any `Claim` or `Idle`). Thread-safe.
#[derive(uniffi::Object)]
pub struct InboxWorker(Mutex<machine::InboxWorker>);

impl InboxWorker {
    fn then(
        &self,
        input: impl FnOnce(&mut machine::InboxWorker) -> std::result::Result<(), royaltykit::Error>,
    ) -> Result<InboxStep> {
        let mut w = lock(&self.0);
        input(&mut w)?;
        Ok(w.next())
    }
}

#[uniffi::export]
impl InboxWorker {
    /// A worker giving each entry at most `maxAttempts` handler runs (null: the core's 5),
    /// waiting `pollSeconds` when nothing is due (null: 1 s), the handler's effect and the mark in
    /// one transaction unless `transactional` is false, stopping at the first empty claim when
    /// `drain`; jitter drawn from `seed` (null: the OS RNG). `invalid_argument` for
    /// `maxAttempts` outside 1 to 100 or a poll interval that is not more than 0 and at most
    /// 3600.
    #[uniffi::constructor(default(max_attempts = None, poll_seconds = None, transactional = None, drain = None, seed = None))]
    pub fn new(
        max_attempts: Option<i64>,
        poll_seconds: Option<f64>,
        transactional: Option<bool>,
        drain: Option<bool>,
        seed: Option<u64>,
    ) -> Result<Arc<Self>> {
        let options = InboxOptions {
            max_attempts: bound("max_attempts", max_attempts, u32::MAX)?,
            poll_seconds,
            transactional,
            drain,
        };
        Self::with_options(options, seed)
    }

    /// A worker with the core's `InboxOptions` record (null members: the core's defaults) and
    /// jitter drawn from `seed` (null: the OS RNG).
    #[uniffi::constructor(default(seed = None))]
    pub fn with_options(options: InboxOptions, seed: Option<u64>) -> Result<Arc<Self>> {
        let seed = match seed {
            Some(s) => s,
            None => royaltykit_host::random_u64()?,
        };
        Ok(Arc::new(Self(Mutex::new(machine::InboxWorker::new(
            &options, seed,
        )?))))
    }

    /// The step pending; the same until its outcome is reported.
    pub fn next(&self) -> InboxStep {
        lock(&self.0).next()
    }

    /// What the claim returned at `now` (null: the system clock): the entry, or null when
    /// nothing is due. Returns the next step. Deprecated (kept for one release): use
    /// `report(InboxOutcome.Claimed(entry), now)`, the worker's one input.
    #[uniffi::method(default(now = None))]
    pub fn claimed(&self, entry: Option<InboxEntry>, now: Option<f64>) -> Result<InboxStep> {
        self.then(|w| Ok(w.claimed(entry, royaltykit_host::now_or_clock_f64(now))?))
    }

    /// Entries processed (committed) so far (a signed `Long`, callable from Java).
    pub fn processed(&self) -> i64 {
        i64::try_from(lock(&self.0).processed()).unwrap_or(i64::MAX)
    }

    /// Failed attempts settled to be retried so far.
    pub fn retried(&self) -> i64 {
        i64::try_from(lock(&self.0).retried()).unwrap_or(i64::MAX)
    }

    /// Entries set aside as poison so far.
    pub fn poisoned(&self) -> i64 {
        i64::try_from(lock(&self.0).poisoned()).unwrap_or(i64::MAX)
    }
}

crate::generated::inbox_worker_inputs!();
