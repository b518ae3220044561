//! The receiver rules, the dedup and inbox protocols (SQL, Redis) for JS: conversions only.

use crate::{err, json, parse, R};
use royaltykit::dedup::{ParamStyle, RedisDedup, RedisInbox, SqlDedup, SqlDialect, SqlInbox};
use royaltykit::receiver;
use royaltykit::webhook::{self, VerifiedWebhook};
use wasm_bindgen::prelude::*;

/// `receiver::plan_receipt`, for a verified delivery as the JSON `verifyWebhook` returned;
/// `claim_content_key`: the content key too (the core's opt-in).
#[wasm_bindgen(js_name = planReceipt)]
pub fn plan_receipt(namespace: &str, delivery_json: &str, claim_content_key: bool) -> R<String> {
    let delivery: VerifiedWebhook = serde_json::from_str(delivery_json).map_err(|_| {
        err(royaltykit::ArgumentError::new(
            "delivery",
            "must be a verified delivery as verifyWebhook returned it",
        ))
    })?;
    receiver::plan_receipt(namespace, &delivery, claim_content_key)
        .map(|d| json(&d))
        .map_err(err)
}

/// `dedup::RedisDedup`: the commands of the dedup contract on Redis and their replies.
#[wasm_bindgen(js_name = RedisDedupProtocol)]
pub struct RedisDedupProtocol(RedisDedup);

#[wasm_bindgen(js_class = RedisDedupProtocol)]
impl RedisDedupProtocol {
    /// `RedisDedup::new`; absent values are the core's defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(
        prefix: Option<String>,
        ttl_seconds: Option<f64>,
        lease_seconds: Option<f64>,
    ) -> R<RedisDedupProtocol> {
        let ttl = crate::opt_int("ttl_seconds", ttl_seconds)?;
        let lease = crate::opt_int("lease_seconds", lease_seconds)?;
        RedisDedup::new(prefix.as_deref(), ttl, lease)
            .map(Self)
            .map_err(err)
    }

    /// `RedisDedup::claim_token` from 16 random bytes.
    #[wasm_bindgen(js_name = claimToken)]
    pub fn claim_token(random: &[u8]) -> R<String> {
        let random: [u8; 16] = random
            .try_into()
            .map_err(|_| err(royaltykit::ArgumentError::new("random", "must be 16 bytes")))?;
        Ok(RedisDedup::claim_token(random))
    }

    /// `RedisDedup::claim_reply`: `"new"`, or `undefined` (then send the state command).
    #[wasm_bindgen(js_name = claimReply)]
    pub fn claim_reply(reply: Option<String>) -> Option<String> {
        RedisDedup::claim_reply(reply.as_deref()).map(|s| s.as_str().to_owned())
    }

    /// `RedisDedup::state_reply`: `"done"` or `"in_progress"`.
    #[wasm_bindgen(js_name = stateReply)]
    pub fn state_reply(reply: Option<String>) -> String {
        RedisDedup::state_reply(reply.as_deref())
            .as_str()
            .to_owned()
    }

    /// `RedisDedup::lookup_reply`: `"new"` for nil, `"done"`, else `"in_progress"`.
    #[wasm_bindgen(js_name = lookupReply)]
    pub fn lookup_reply(reply: Option<String>) -> String {
        RedisDedup::lookup_reply(reply.as_deref())
            .as_str()
            .to_owned()
    }

    /// `RedisDedup::guarded_reply`: the guarded commit's or release's reply (decimal text).
    #[wasm_bindgen(js_name = guardedReply)]
    pub fn guarded_reply(reply: Option<String>) -> bool {
        RedisDedup::guarded_reply(reply.as_deref())
    }
}

crate::generated::redis_dedup_protocol_methods!();

/// `dedup::SqlDedup`: the statements of the dedup contract in the user's SQL database (the
/// mark inside the handler's transaction), as JSON `{"sql", "args"}`, and their results.
#[wasm_bindgen(js_name = SqlDedupProtocol)]
pub struct SqlDedupProtocol(SqlDedup);

#[wasm_bindgen(js_class = SqlDedupProtocol)]
impl SqlDedupProtocol {
    /// `SqlDedup::new`; absent values are the core's defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(
        dialect: &str,
        param_style: &str,
        table: Option<String>,
        ttl_seconds: Option<f64>,
        lease_seconds: Option<f64>,
    ) -> R<SqlDedupProtocol> {
        let ttl = crate::opt_int("ttl_seconds", ttl_seconds)?;
        let lease = crate::opt_int("lease_seconds", lease_seconds)?;
        let dialect = parse(SqlDialect::parse, dialect)?;
        let style = parse(ParamStyle::parse, param_style)?;
        SqlDedup::new(dialect, style, table.as_deref(), ttl, lease)
            .map(Self)
            .map_err(err)
    }

    /// `SqlDedup::table`.
    #[wasm_bindgen(getter)]
    pub fn table(&self) -> String {
        self.0.table().to_owned()
    }

    /// `SqlDedup::claim_reply`: `"new"`, or `undefined` (then run the state statement).
    #[wasm_bindgen(js_name = claimReply)]
    pub fn claim_reply(rows: u32) -> Option<String> {
        SqlDedup::claim_reply(u64::from(rows)).map(|s| s.as_str().to_owned())
    }

    /// `SqlDedup::state_reply`: `"done"` or `"in_progress"`.
    #[wasm_bindgen(js_name = stateReply)]
    pub fn state_reply(state: Option<String>) -> String {
        SqlDedup::state_reply(state.as_deref()).as_str().to_owned()
    }

    /// `SqlDedup::lookup_reply`: `"new"` for no row, `"done"`, else `"in_progress"`.
    #[wasm_bindgen(js_name = lookupReply)]
    pub fn lookup_reply(state: Option<String>) -> String {
        SqlDedup::lookup_reply(state.as_deref()).as_str().to_owned()
    }

    /// `SqlDedup::guarded_reply`: true for one changed row.
    #[wasm_bindgen(js_name = guardedReply)]
    pub fn guarded_reply(rows: u32) -> bool {
        SqlDedup::guarded_reply(u64::from(rows))
    }
}

crate::generated::sql_dedup_protocol_methods!();

/// `dedup::SqlInbox`: the statements of the inbox table in the user's SQL database (persist a
/// verified delivery, claim, mark done in the handler's transaction, settle, poison), as JSON
/// `{"sql", "args"}`, and what their results mean.
#[wasm_bindgen(js_name = SqlInboxProtocol)]
pub struct SqlInboxProtocol(SqlInbox);

/// A host count (rows, attempts, a limit) as `u32`, else `invalid_argument` naming it.
fn u32_arg(name: &'static str, value: f64) -> R<u32> {
    let v = crate::int(name, value)?;
    u32::try_from(v).map_err(|_| {
        err(royaltykit::ArgumentError::new(
            name,
            format!("{v} is out of range: give a whole number from 0"),
        ))
    })
}

#[wasm_bindgen(js_class = SqlInboxProtocol)]
impl SqlInboxProtocol {
    /// `SqlInbox::new`; absent values are the core's defaults. Throws `invalid_argument` for an
    /// unknown dialect or style, a table that is not a plain identifier, a TTL or lease out of
    /// range.
    #[wasm_bindgen(constructor)]
    pub fn new(
        dialect: &str,
        param_style: &str,
        table: Option<String>,
        ttl_seconds: Option<f64>,
        lease_seconds: Option<f64>,
    ) -> R<SqlInboxProtocol> {
        let ttl = crate::opt_int("ttl_seconds", ttl_seconds)?;
        let lease = crate::opt_int("lease_seconds", lease_seconds)?;
        let dialect = parse(SqlDialect::parse, dialect)?;
        let style = parse(ParamStyle::parse, param_style)?;
        SqlInbox::new(dialect, style, table.as_deref(), ttl, lease)
            .map(Self)
            .map_err(err)
    }

    /// `SqlInbox::table`.
    #[wasm_bindgen(getter)]
    pub fn table(&self) -> String {
        self.0.table().to_owned()
    }

    /// `SqlInbox::lease_seconds`.
    #[wasm_bindgen(getter, js_name = leaseSeconds)]
    pub fn lease_seconds(&self) -> f64 {
        self.0.lease_seconds() as f64
    }

    /// `SqlInbox::enqueue_reply`: true for a new entry, false for a duplicate.
    #[wasm_bindgen(js_name = enqueueReply)]
    pub fn enqueue_reply(rows: u32) -> bool {
        SqlInbox::enqueue_reply(u64::from(rows))
    }

    /// `SqlInbox::mark_done` of the claim that counted `attempts`, at `now`, as JSON.
    #[wasm_bindgen(js_name = markDone)]
    pub fn mark_done(&self, key: &str, attempts: f64, now: f64) -> R<String> {
        let attempts = u32_arg("attempts", attempts)?;
        let now = crate::now_arg(now)?;
        self.0
            .mark_done(key, attempts, now)
            .map(|s| json(&s))
            .map_err(err)
    }

    /// `SqlInbox::guarded_reply`: true for one changed row.
    #[wasm_bindgen(js_name = guardedReply)]
    pub fn guarded_reply(rows: u32) -> bool {
        SqlInbox::guarded_reply(u64::from(rows))
    }

    /// `SqlInbox::settle`, as JSON.
    pub fn settle(
        &self,
        key: &str,
        attempts: f64,
        poison: bool,
        retry_at: f64,
        error: &str,
    ) -> R<String> {
        let attempts = u32_arg("attempts", attempts)?;
        let retry_at = crate::int("retry_at", retry_at)?;
        self.0
            .settle(key, attempts, poison, retry_at, error)
            .map(|s| json(&s))
            .map_err(err)
    }

    /// `SqlInbox::poisoned` (at most `limit`), as JSON.
    pub fn poisoned(&self, limit: f64) -> R<String> {
        let limit = u32_arg("limit", limit)?;
        self.0.poisoned(limit).map(|s| json(&s)).map_err(err)
    }

    /// `SqlInbox::lookup_reply`: `"new"` for no row, `"done"`, else `"in_progress"`.
    #[wasm_bindgen(js_name = lookupReply)]
    pub fn lookup_reply(state: Option<String>) -> String {
        SqlInbox::lookup_reply(state.as_deref()).as_str().to_owned()
    }
}

crate::generated::sql_inbox_protocol_methods!();

/// `dedup::RedisInbox`: the inbox on a Redis stream as commands (argument lists to send as
/// they are) and what their replies mean (each one string, or `undefined` for nil).
#[wasm_bindgen(js_name = RedisInboxProtocol)]
pub struct RedisInboxProtocol(RedisInbox);

/// A command as a JS array of strings, converted in this one place (not once per method: the
/// package's size, issue 44).
#[inline(never)]
fn command(c: Result<Vec<String>, royaltykit::ArgumentError>) -> R<js_sys::Array> {
    Ok(c.map_err(err)?
        .iter()
        .map(|a| JsValue::from_str(a))
        .collect())
}

#[wasm_bindgen(js_class = RedisInboxProtocol)]
impl RedisInboxProtocol {
    /// `RedisInbox::new`; absent values are the core's defaults.
    #[wasm_bindgen(constructor)]
    pub fn new(
        prefix: Option<String>,
        ttl_seconds: Option<f64>,
        lease_seconds: Option<f64>,
    ) -> R<RedisInboxProtocol> {
        let ttl = crate::opt_int("ttl_seconds", ttl_seconds)?;
        let lease = crate::opt_int("lease_seconds", lease_seconds)?;
        RedisInbox::new(prefix.as_deref(), ttl, lease)
            .map(Self)
            .map_err(err)
    }

    /// `RedisInbox::prefix`.
    #[wasm_bindgen(getter)]
    pub fn prefix(&self) -> String {
        self.0.prefix().to_owned()
    }

    /// `RedisInbox::lease_seconds`.
    #[wasm_bindgen(getter, js_name = leaseSeconds)]
    pub fn lease_seconds(&self) -> f64 {
        self.0.lease_seconds() as f64
    }

    /// `RedisInbox::enqueue_command` at `now`.
    #[wasm_bindgen(js_name = enqueueCommand)]
    pub fn enqueue_command(
        &self,
        key: &str,
        delivery_id: &str,
        event: &str,
        body: &str,
        now: f64,
    ) -> R<js_sys::Array> {
        let now = crate::now_arg(now)?;
        command(self.0.enqueue_command(key, delivery_id, event, body, now))
    }

    /// `RedisInbox::added_reply`: the integer reply of enqueue, mark, settle or retry (decimal
    /// text): true for 1.
    #[wasm_bindgen(js_name = addedReply)]
    pub fn added_reply(reply: Option<String>) -> bool {
        RedisInbox::added_reply(reply.as_deref())
    }

    /// `RedisInbox::claim_command` at `now`.
    #[wasm_bindgen(js_name = claimCommand)]
    pub fn claim_command(&self, now: f64) -> R<js_sys::Array> {
        command(Ok(self.0.claim_command(crate::now_arg(now)?)))
    }

    /// `RedisInbox::claim_reply`, as JSON: the entry, or `null` when nothing is due.
    #[wasm_bindgen(js_name = claimReply)]
    pub fn claim_reply(reply: Option<String>) -> R<String> {
        RedisInbox::claim_reply(reply.as_deref())
            .map(|e| json(&e))
            .map_err(err)
    }

    /// `RedisInbox::mark_done_command` of the claim that counted `attempts`, at `now`.
    #[wasm_bindgen(js_name = markDoneCommand)]
    pub fn mark_done_command(&self, key: &str, attempts: f64, now: f64) -> R<js_sys::Array> {
        let attempts = u32_arg("attempts", attempts)?;
        let now = crate::now_arg(now)?;
        command(self.0.mark_done_command(key, attempts, now))
    }

    /// `RedisInbox::settle_command`.
    #[wasm_bindgen(js_name = settleCommand)]
    pub fn settle_command(
        &self,
        key: &str,
        attempts: f64,
        poison: bool,
        retry_at: f64,
        error: &str,
    ) -> R<js_sys::Array> {
        let attempts = u32_arg("attempts", attempts)?;
        let retry_at = crate::int("retry_at", retry_at)?;
        command(
            self.0
                .settle_command(key, attempts, poison, retry_at, error),
        )
    }

    /// `RedisInbox::poisoned_command` (at most `limit`).
    #[wasm_bindgen(js_name = poisonedCommand)]
    pub fn poisoned_command(&self, limit: f64) -> R<js_sys::Array> {
        let limit = u32_arg("limit", limit)?;
        command(self.0.poisoned_command(limit))
    }

    /// `RedisInbox::poisoned_reply`, as JSON.
    #[wasm_bindgen(js_name = poisonedReply)]
    pub fn poisoned_reply(reply: Option<String>) -> R<String> {
        RedisInbox::poisoned_reply(reply.as_deref())
            .map(|e| json(&e))
            .map_err(err)
    }

    /// `RedisInbox::retry_command`.
    #[wasm_bindgen(js_name = retryCommand)]
    pub fn retry_command(&self, key: &str) -> R<js_sys::Array> {
        command(self.0.retry_command(key))
    }

    /// `RedisInbox::lookup_command`: the read-only lookup of `key` (delivery recovery).
    #[wasm_bindgen(js_name = lookupCommand)]
    pub fn lookup_command(&self, key: &str) -> R<js_sys::Array> {
        command(self.0.lookup_command(key))
    }

    /// `RedisInbox::lookup_reply`: `"new"` for nil, `"done"`, else `"in_progress"`.
    #[wasm_bindgen(js_name = lookupReply)]
    pub fn lookup_reply(reply: Option<String>) -> String {
        RedisInbox::lookup_reply(reply.as_deref())
            .as_str()
            .to_owned()
    }

    /// `RedisInbox::counts_command` at `now`.
    #[wasm_bindgen(js_name = countsCommand)]
    pub fn counts_command(&self, now: f64) -> R<js_sys::Array> {
        command(Ok(self.0.counts_command(crate::now_arg(now)?)))
    }

    /// `RedisInbox::counts_reply`, as JSON.
    #[wasm_bindgen(js_name = countsReply)]
    pub fn counts_reply(reply: Option<String>) -> R<String> {
        RedisInbox::counts_reply(reply.as_deref())
            .map(|c| json(&c))
            .map_err(err)
    }

    /// `RedisInbox::purge_command` at `now` (its integer reply: how many).
    #[wasm_bindgen(js_name = purgeCommand)]
    pub fn purge_command(&self, now: f64) -> R<js_sys::Array> {
        command(Ok(self.0.purge_command(crate::now_arg(now)?)))
    }
}

/// The inbox's constants as JSON: `defaultTable` (`dedup::DEFAULT_INBOX_TABLE`),
/// `defaultMaxAttempts`, `maxAttempts` (`machine::MAX_INBOX_ATTEMPTS`), `defaultPollSeconds`,
/// `maxBodyBytes`, `maxErrorBytes`, `maxPoisonListed`, `defaultPoisonListed`
/// (`dedup::DEFAULT_POISON_LISTED`: what `poisoned()` lists when given no limit).
#[wasm_bindgen(js_name = inboxLimits)]
pub fn inbox_limits() -> String {
    use royaltykit::{dedup, machine};
    json(&serde_json::json!({
        "defaultTable": dedup::DEFAULT_INBOX_TABLE,
        "defaultMaxAttempts": dedup::DEFAULT_MAX_ATTEMPTS,
        "maxAttempts": machine::MAX_INBOX_ATTEMPTS,
        "defaultPollSeconds": machine::DEFAULT_POLL_SECONDS,
        "maxBodyBytes": dedup::MAX_INBOX_BODY_BYTES,
        "maxErrorBytes": dedup::MAX_ERROR_BYTES,
        "maxPoisonListed": dedup::MAX_POISON_LISTED,
        "defaultPoisonListed": dedup::DEFAULT_POISON_LISTED,
    }))
}

/// `webhook::EventRouter`: a router's registrations (names only). The JS `EventRouter` keeps
/// the handlers by the indices `on` returns and runs the ones `route` names.
#[wasm_bindgen(js_name = EventRouter)]
#[derive(Default)]
pub struct EventRouter(webhook::EventRouter);

#[wasm_bindgen(js_class = EventRouter)]
impl EventRouter {
    /// An empty router.
    #[wasm_bindgen(constructor)]
    pub fn new() -> EventRouter {
        Self::default()
    }

    /// `EventRouter::on`: the registration's index, or `invalid_argument` (argument `event`)
    /// for a name that is empty, longer than 256 bytes or holds a space or control character.
    pub fn on(&mut self, name: &str) -> R<u32> {
        self.0.on(name).map_err(err)
    }

    /// `EventRouter::on_any`.
    #[wasm_bindgen(js_name = onAny)]
    pub fn on_any(&mut self) {
        self.0.on_any();
    }

    /// `EventRouter::otherwise`.
    pub fn otherwise(&mut self) {
        self.0.otherwise();
    }

    /// `EventRouter::route`: where a delivery of the event `name` goes, as the JSON of the
    /// core's `Route` (`{"named", "any", "fallback"}`).
    pub fn route(&self, name: &str) -> String {
        json(&self.0.route(name))
    }
}

/// `webhook::known_event_names`: the event names the spec lists, as the service sends them.
#[wasm_bindgen(js_name = knownEventNames)]
pub fn known_event_names() -> Vec<String> {
    webhook::known_event_names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}
