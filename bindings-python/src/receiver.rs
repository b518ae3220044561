//! The receiver rules, the Redis and SQL dedup protocols, the SQL inbox's statements and the
//! Redis stream inbox's commands for Python: conversions only.

use crate::args::Text;
use crate::guard;
use pyo3::prelude::*;
use royaltykit::dedup::{
    self, ClaimState, InboxCounts, InboxPoisonEntry, ParamStyle, RedisDedup as Protocol,
    RedisInbox, SqlDedup, SqlDialect, SqlInbox, SqlStatement,
};
use royaltykit::machine::InboxEntry;
use royaltykit::receiver::{self, ReceiverDecision, ReceiverReply};
use royaltykit::webhook::VerifiedWebhook;

/// What to do with a verified delivery: acknowledge a test event, or the keys to claim (the
/// delivery key; the content key too with ``claim_content_key=True``, see
/// ``WebhookVerifier.receipt``).
#[pyfunction]
#[pyo3(signature = (namespace, delivery, *, claim_content_key=false))]
fn plan_receipt(
    namespace: Text,
    delivery: PyRef<'_, VerifiedWebhook>,
    claim_content_key: bool,
) -> PyResult<ReceiverDecision> {
    guard(|| {
        Ok(receiver::plan_receipt(
            &namespace,
            &delivery,
            claim_content_key,
        )?)
    })
}

/// The dedup contract on Redis as commands (lists of str) and the meaning of their replies.
#[pyclass(frozen, module = "royaltykit")]
struct RedisDedupProtocol(Protocol);

crate::generated::redis_dedup_protocol_methods! {
    #[new]
    #[pyo3(signature = (*, prefix=None, ttl_seconds=None, lease_seconds=None))]
    fn new(
        prefix: Option<Text>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> PyResult<Self> {
        guard(|| {
            Ok(Self(Protocol::new(
                prefix.as_deref(),
                ttl_seconds,
                lease_seconds,
            )?))
        })
    }

    /// A claim token (32 hex characters) from the OS random source.
    #[staticmethod]
    fn new_token() -> PyResult<String> {
        guard(|| Ok(Protocol::claim_token(royaltykit_host::random_seed()?)))
    }

    /// ``"new"`` for ``OK``; None for nil (then send ``state_command``).
    #[staticmethod]
    fn claim_reply(reply: Option<Text>) -> Option<ClaimState> {
        Protocol::claim_reply(reply.as_deref())
    }

    /// ``"done"`` or ``"in_progress"``.
    #[staticmethod]
    fn state_reply(reply: Option<Text>) -> ClaimState {
        Protocol::state_reply(reply.as_deref())
    }

    /// What a lookup's reply means: ``"done"`` once committed, ``"in_progress"`` for a live
    /// claim, ``"new"`` for nil (never seen, or its claim or TTL ran out).
    #[staticmethod]
    fn lookup_reply(reply: Option<Text>) -> ClaimState {
        Protocol::lookup_reply(reply.as_deref())
    }

    /// What the guarded commit's or release's reply means: True for 1 (done, released), False
    /// otherwise (the key no longer holds this claim).
    #[staticmethod]
    fn guarded_reply(reply: Option<Text>) -> bool {
        Protocol::guarded_reply(reply.as_deref())
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The dedup contract in your own SQL database (marked done inside the handler's transaction):
/// statements (``SqlStatement``: ``sql`` with the driver's placeholders, ``args``) and the
/// meaning of their results. ``dialect``: "postgres" or "sqlite"; ``param_style``: "qmark"
/// (``?``), "dollar" (``$1``) or "format" (``%s``, psycopg).
#[pyclass(frozen, module = "royaltykit")]
struct SqlDedupProtocol(SqlDedup);

crate::generated::sql_dedup_protocol_methods! {
    #[new]
    #[pyo3(signature = (dialect, *, param_style, table=None, ttl_seconds=None, lease_seconds=None))]
    fn new(
        dialect: Text,
        param_style: Text,
        table: Option<Text>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> PyResult<Self> {
        guard(|| {
            Ok(Self(SqlDedup::new(
                SqlDialect::parse(&dialect)?,
                ParamStyle::parse(&param_style)?,
                table.as_deref(),
                ttl_seconds,
                lease_seconds,
            )?))
        })
    }

    /// A claim token (32 hex characters) from the OS random source.
    #[staticmethod]
    fn new_token() -> PyResult<String> {
        guard(|| Ok(SqlDedup::claim_token(royaltykit_host::random_seed()?)))
    }

    /// The table's name.
    #[getter]
    fn table(&self) -> &str {
        self.0.table()
    }

    /// ``"new"`` for a returned row; None for none (then run ``state``).
    #[staticmethod]
    fn claim_reply(rows: u64) -> Option<ClaimState> {
        SqlDedup::claim_reply(rows)
    }

    /// ``"done"`` or ``"in_progress"`` (the ``state`` column, None for no row).
    #[staticmethod]
    fn state_reply(state: Option<Text>) -> ClaimState {
        SqlDedup::state_reply(state.as_deref())
    }

    /// What a lookup returned (the ``state`` column, None for no row): ``"done"`` for a
    /// processed key, ``"in_progress"`` for a live claim, ``"new"`` for no row (never seen, or
    /// expired).
    #[staticmethod]
    fn lookup_reply(state: Option<Text>) -> ClaimState {
        SqlDedup::lookup_reply(state.as_deref())
    }

    /// True for one changed row (this claim), False for none (the claim was lost).
    #[staticmethod]
    fn guarded_reply(rows: u64) -> bool {
        SqlDedup::guarded_reply(rows)
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The inbox in your SQL database (the spec's "persist and return success", then process): the
/// statements (``SqlStatement``) of its table and the meaning of their results. A receiver in
/// inbox mode runs ``enqueue``; a worker (``InboxWorker``) runs ``claim``, ``begin``,
/// ``mark_done`` (inside the handler's transaction), ``commit``, ``rollback`` and ``settle``;
/// operators run ``poisoned``, ``retry``, ``counts`` and ``purge``; delivery recovery runs
/// ``lookup``. ``dialect``: "postgres" or "sqlite"; ``param_style``: "qmark" (``?``), "dollar"
/// (``$1``) or "format" (``%s``, psycopg).
#[pyclass(frozen, module = "royaltykit")]
struct SqlInboxProtocol(SqlInbox);

crate::generated::sql_inbox_protocol_methods! {
    /// The table name when none is given.
    #[classattr]
    const DEFAULT_TABLE: &'static str = dedup::DEFAULT_INBOX_TABLE;
    /// Handler runs of one entry before it is poison, when ``max_attempts`` is not given.
    #[classattr]
    const DEFAULT_MAX_ATTEMPTS: u32 = dedup::DEFAULT_MAX_ATTEMPTS;
    /// The largest body kept, in bytes (the spec's payload limit).
    #[classattr]
    const MAX_BODY_BYTES: usize = dedup::MAX_INBOX_BODY_BYTES;
    /// The longest ``last_error`` kept, in bytes.
    #[classattr]
    const MAX_ERROR_BYTES: usize = dedup::MAX_ERROR_BYTES;
    /// The most poison entries one listing returns.
    #[classattr]
    const MAX_POISON_LISTED: u32 = dedup::MAX_POISON_LISTED;

    /// The statements of the inbox table ``table`` (default ``royaltykit_inbox``); done rows are
    /// kept ``ttl_seconds`` (default: the dedup window's) as the deliveries' dedup records, and a
    /// claim holds an entry ``lease_seconds`` (default: the dedup lease). ``InvalidArgumentError``
    /// for an unknown dialect or style, a table that is not a plain identifier, a TTL outside 1 s
    /// to 10 years, or a lease outside 1 s to the TTL.
    #[new]
    #[pyo3(signature = (dialect, *, param_style, table=None, ttl_seconds=None, lease_seconds=None))]
    fn new(
        dialect: Text,
        param_style: Text,
        table: Option<Text>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> PyResult<Self> {
        guard(|| {
            Ok(Self(SqlInbox::new(
                SqlDialect::parse(&dialect)?,
                ParamStyle::parse(&param_style)?,
                table.as_deref(),
                ttl_seconds,
                lease_seconds,
            )?))
        })
    }

    /// The table's name.
    #[getter]
    fn table(&self) -> &str {
        self.0.table()
    }

    /// How long a claim holds an entry, in seconds.
    #[getter]
    fn lease_seconds(&self) -> i64 {
        self.0.lease_seconds()
    }

    /// True for one inserted row (a new entry), False for none (already in the inbox: a
    /// redelivery, answered 2xx all the same).
    #[staticmethod]
    fn enqueue_reply(rows: u64) -> bool {
        SqlInbox::enqueue_reply(rows)
    }

    /// The mark of ``key`` done by the claim that counted ``attempts``, at ``now``, **inside the
    /// handler's transaction**; read its count of changed rows with ``guarded_reply``.
    fn mark_done(&self, key: Text, attempts: u32, now: i64) -> PyResult<SqlStatement> {
        guard(|| Ok(self.0.mark_done(&key, attempts, now)?))
    }

    /// True for one changed row (this claim), False for none (another worker claimed the entry
    /// after this claim's lease ran out: roll back).
    #[staticmethod]
    fn guarded_reply(rows: u64) -> bool {
        SqlInbox::guarded_reply(rows)
    }

    /// The settling of a failed attempt (autocommit, after the rollback): pending again at
    /// ``retry_at``, or poison, with ``error`` (cut to ``MAX_ERROR_BYTES``) — the values of
    /// ``InboxStep.Settle``.
    fn settle(
        &self,
        key: Text,
        attempts: u32,
        poison: bool,
        retry_at: i64,
        error: Text,
    ) -> PyResult<SqlStatement> {
        guard(|| Ok(self.0.settle(&key, attempts, poison, retry_at, &error)?))
    }

    /// The listing of poison entries, oldest first, at most ``limit`` (1 to
    /// ``MAX_POISON_LISTED``): six columns (``inbox_key``, ``delivery_id``, ``event``,
    /// ``attempts``, ``last_error``, ``received_at``).
    fn poisoned(&self, limit: i64) -> PyResult<SqlStatement> {
        let limit = u32::try_from(limit.max(0)).unwrap_or(u32::MAX);
        guard(|| Ok(self.0.poisoned(limit)?))
    }

    /// What a lookup returned (the ``state`` column, None for no row): ``"new"`` (never
    /// received), ``"done"`` (processed), ``"in_progress"`` (received, pending or poison).
    #[staticmethod]
    fn lookup_reply(state: Option<Text>) -> ClaimState {
        SqlInbox::lookup_reply(state.as_deref())
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// The inbox on a Redis stream (the spec's "persist and return success", then process): its
/// commands (lists of str, each sent as is: ``EVAL script numkeys keys… args…`` or ``HGET``) and
/// the meaning of their replies. Every reply is one nil, integer or bulk string (arrays come as
/// JSON text): give it as ``str`` (integers as decimal text, bytes decoded as UTF-8) or None. A
/// receiver in inbox mode sends ``enqueue_command``; a worker (``InboxWorker(transactional=False)``)
/// sends ``claim_command``, ``mark_done_command`` and ``settle_command``; operators send
/// ``poisoned_command``, ``retry_command``, ``counts_command`` and ``purge_command``; delivery
/// recovery sends ``lookup_command``. No transaction is shared with the handler's effects: they
/// are at least once. Needs Redis 6.2 or later, with persistence.
#[pyclass(frozen, module = "royaltykit")]
struct RedisInboxProtocol(RedisInbox);

#[pymethods]
impl RedisInboxProtocol {
    /// The key prefix when none is given (a Redis Cluster hash tag: one slot per inbox).
    #[classattr]
    const DEFAULT_PREFIX: &'static str = dedup::DEFAULT_REDIS_INBOX_PREFIX;
    /// Handler runs of one entry before it is poison, when ``max_attempts`` is not given.
    #[classattr]
    const DEFAULT_MAX_ATTEMPTS: u32 = dedup::DEFAULT_MAX_ATTEMPTS;
    /// The largest body kept, in bytes (the spec's payload limit).
    #[classattr]
    const MAX_BODY_BYTES: usize = dedup::MAX_INBOX_BODY_BYTES;
    /// The longest ``last_error`` kept, in bytes.
    #[classattr]
    const MAX_ERROR_BYTES: usize = dedup::MAX_ERROR_BYTES;
    /// The most poison entries one listing returns.
    #[classattr]
    const MAX_POISON_LISTED: u32 = dedup::MAX_POISON_LISTED;

    /// The commands of the inbox under ``prefix`` (default ``DEFAULT_PREFIX``); done entries are
    /// kept ``ttl_seconds`` (default: the dedup window's) as the deliveries' dedup records, and a
    /// claim holds an entry ``lease_seconds`` (default: the dedup lease). ``InvalidArgumentError``
    /// for an empty prefix or one over 256 bytes, a TTL outside 1 s to 10 years, or a lease
    /// outside 1 s to the TTL.
    #[new]
    #[pyo3(signature = (*, prefix=None, ttl_seconds=None, lease_seconds=None))]
    fn new(
        prefix: Option<Text>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> PyResult<Self> {
        guard(|| {
            Ok(Self(RedisInbox::new(
                prefix.as_deref(),
                ttl_seconds,
                lease_seconds,
            )?))
        })
    }

    /// The key prefix.
    #[getter]
    fn prefix(&self) -> &str {
        self.0.prefix()
    }

    /// How long a claim holds an entry, in seconds.
    #[getter]
    fn lease_seconds(&self) -> i64 {
        self.0.lease_seconds()
    }

    /// The command adding a verified delivery at ``now`` (Unix seconds): ``key`` its delivery
    /// key, ``delivery_id`` its ``Service-Webhook-Id``, ``event`` its event name, ``body`` its
    /// raw JSON body as text. Read its reply with ``added_reply``. ``InvalidArgumentError`` for a
    /// bad key, an empty delivery id or a body over ``MAX_BODY_BYTES``.
    fn enqueue_command(
        &self,
        key: Text,
        delivery_id: Text,
        event: Text,
        body: Text,
        now: i64,
    ) -> PyResult<Vec<String>> {
        guard(|| {
            Ok(self
                .0
                .enqueue_command(&key, &delivery_id, &event, &body, now)?)
        })
    }

    /// What the integer reply of enqueue, mark, settle or retry means: True for 1 (added,
    /// marked, settled, put back), False for 0, nil or anything else.
    #[staticmethod]
    fn added_reply(reply: Option<Text>) -> bool {
        RedisInbox::added_reply(reply.as_deref())
    }

    /// The claim of one due entry at ``now``: it counts an attempt and holds the entry for the
    /// lease. Read its reply with ``claim_reply``.
    fn claim_command(&self, now: i64) -> Vec<String> {
        self.0.claim_command(now)
    }

    /// The entry a claim's reply holds (report it to ``InboxWorker.claimed``), or None for nil
    /// (nothing due). ``InvalidArgumentError`` (argument ``reply``) for anything else.
    #[staticmethod]
    fn claim_reply(reply: Option<Text>) -> PyResult<Option<InboxEntry>> {
        guard(|| Ok(RedisInbox::claim_reply(reply.as_deref())?))
    }

    /// The mark of ``key`` done by the claim that counted ``attempts``, at ``now``; read its reply
    /// with ``added_reply`` (False: another worker claimed the entry after this claim's lease
    /// ran out).
    fn mark_done_command(&self, key: Text, attempts: u32, now: i64) -> PyResult<Vec<String>> {
        guard(|| Ok(self.0.mark_done_command(&key, attempts, now)?))
    }

    /// The settling of a failed attempt of ``key`` (the claim that counted ``attempts``):
    /// pending again from ``retry_at``, or poison, with ``error`` (cut to ``MAX_ERROR_BYTES``) —
    /// the values of ``InboxStep.Settle``. Reply: ``added_reply``.
    fn settle_command(
        &self,
        key: Text,
        attempts: u32,
        poison: bool,
        retry_at: i64,
        error: Text,
    ) -> PyResult<Vec<String>> {
        guard(|| {
            Ok(self
                .0
                .settle_command(&key, attempts, poison, retry_at, &error)?)
        })
    }

    /// The listing of poison entries, oldest first, at most ``limit`` (1 to
    /// ``MAX_POISON_LISTED``); read its reply with ``poisoned_reply``.
    fn poisoned_command(&self, limit: i64) -> PyResult<Vec<String>> {
        let limit = u32::try_from(limit.max(0)).unwrap_or(u32::MAX);
        guard(|| Ok(self.0.poisoned_command(limit)?))
    }

    /// The poison entries of a listing's reply. ``InvalidArgumentError`` (argument ``reply``)
    /// for a reply of another shape.
    #[staticmethod]
    fn poisoned_reply(reply: Option<Text>) -> PyResult<Vec<InboxPoisonEntry>> {
        guard(|| Ok(RedisInbox::poisoned_reply(reply.as_deref())?))
    }

    /// The command putting a poison entry back to pending with no attempts counted. Reply:
    /// ``added_reply`` (False: ``key`` is not a poison entry).
    fn retry_command(&self, key: Text) -> PyResult<Vec<String>> {
        guard(|| Ok(self.0.retry_command(&key)?))
    }

    /// The read-only lookup of ``key`` (delivery recovery); read its reply with
    /// ``lookup_reply``.
    fn lookup_command(&self, key: Text) -> PyResult<Vec<String>> {
        guard(|| Ok(self.0.lookup_command(&key)?))
    }

    /// What a lookup's reply means: ``"new"`` for nil (never received, or done and past its
    /// TTL), ``"done"`` (processed), ``"in_progress"`` (received: pending or poison).
    #[staticmethod]
    fn lookup_reply(reply: Option<Text>) -> ClaimState {
        RedisInbox::lookup_reply(reply.as_deref())
    }

    /// The count of entries by state at ``now``; read its reply with ``counts_reply``.
    fn counts_command(&self, now: i64) -> Vec<String> {
        self.0.counts_command(now)
    }

    /// The counts of a counts reply (``InboxCounts``). ``InvalidArgumentError`` (argument
    /// ``reply``) for a reply of another shape.
    #[staticmethod]
    fn counts_reply(reply: Option<Text>) -> PyResult<InboxCounts> {
        guard(|| Ok(RedisInbox::counts_reply(reply.as_deref())?))
    }

    /// The command forgetting done entries past their TTL at ``now``; its integer reply is how
    /// many.
    fn purge_command(&self, now: i64) -> Vec<String> {
        self.0.purge_command(now)
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m;
        fn plan_receipt;
        class RedisDedupProtocol, SqlDedupProtocol, SqlInboxProtocol, RedisInboxProtocol, SqlStatement,
            ReceiverDecision, ReceiverReply, InboxPoisonEntry, InboxCounts
    );
    m.add("DEFAULT_POISON_LISTED", dedup::DEFAULT_POISON_LISTED)?;
    m.add("DEFAULT_STORE_CAPACITY", receiver::DEFAULT_STORE_CAPACITY)?;
    m.add("STATUS_HANDLER_FAILED", receiver::STATUS_HANDLER_FAILED)?;
    m.add(
        "STATUS_STORE_UNAVAILABLE",
        receiver::STATUS_STORE_UNAVAILABLE,
    )?;
    Ok(())
}
