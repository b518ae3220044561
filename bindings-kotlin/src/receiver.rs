//! The receiver rules and the Redis and SQL dedup protocols for Kotlin: conversions only.

use crate::Result;
use royaltykit::dedup::{ClaimState, ParamStyle, RedisDedup, SqlDedup, SqlDialect};
use royaltykit::receiver::{self, ReceiverDecision};
use royaltykit::webhook::VerifiedWebhook;
use std::sync::Arc;

/// What to do with a verified delivery: acknowledge a test event, or the keys to claim — the
/// delivery key ("deduplicate by Service-Webhook-Id"), and with `claimContentKey` the content key
/// too. The content key is opt-in: it stops a captured delivery resent under a new id inside the
/// tolerance, and it also merges two genuine deliveries whose body and timestamp are
/// byte-identical (two changes of one resource in the same second: the second is acknowledged
/// and its handler never runs).
#[uniffi::export(default(claim_content_key = false))]
pub fn plan_receipt(
    namespace: String,
    delivery: VerifiedWebhook,
    claim_content_key: bool,
) -> Result<ReceiverDecision> {
    Ok(receiver::plan_receipt(
        &namespace,
        &delivery,
        claim_content_key,
    )?)
}

/// The dedup contract on Redis: the commands to send (as argument lists) and what their
/// replies mean. `RedisDedupStore` (RoyaltyKit.kt) sends them through the host's client.
#[derive(uniffi::Object)]
pub struct RedisDedupProtocol(RedisDedup);

#[uniffi::export]
impl RedisDedupProtocol {
    /// Absent values are the core's defaults (prefix `royaltykit:dedup:`, the dedup window's
    /// TTL and lease).
    #[uniffi::constructor(default(prefix = None, ttl_seconds = None, lease_seconds = None))]
    pub fn new(
        prefix: Option<String>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(RedisDedup::new(
            prefix.as_deref(),
            ttl_seconds,
            lease_seconds,
        )?)))
    }

    /// A claim token (32 hex characters) from the OS random source.
    pub fn new_token(&self) -> Result<String> {
        Ok(RedisDedup::claim_token(royaltykit_host::random_seed()?))
    }

    /// `NEW` for `OK`; null for nil (then send `stateCommand`).
    pub fn claim_reply(&self, reply: Option<String>) -> Option<ClaimState> {
        RedisDedup::claim_reply(reply.as_deref())
    }

    /// `DONE` or `IN_PROGRESS`.
    pub fn state_reply(&self, reply: Option<String>) -> ClaimState {
        RedisDedup::state_reply(reply.as_deref())
    }

    /// What a lookup's reply means: `DONE` once committed, `IN_PROGRESS` for a live claim, `NEW`
    /// for nil (never seen, or its claim or TTL ran out).
    pub fn lookup_reply(&self, reply: Option<String>) -> ClaimState {
        RedisDedup::lookup_reply(reply.as_deref())
    }

    /// What the guarded commit's or release's reply means: true for 1 (done, released), false
    /// otherwise (the key no longer holds this claim).
    pub fn guarded_reply(&self, reply: Option<String>) -> bool {
        RedisDedup::guarded_reply(reply.as_deref())
    }
}

crate::generated::redis_dedup_protocol_methods!();

/// The dedup contract in the handler's own SQL database (PostgreSQL, SQLite): the statements to
/// run (text with the driver's placeholders, and the arguments) and what their results mean.
/// `JdbcDedupStore` (JdbcDedupStore.kt) runs them over a `javax.sql.DataSource`.
#[derive(uniffi::Object)]
pub struct SqlDedupProtocol(SqlDedup);

/// A count of rows as JDBC gives it (an `Int` or a `Long`, never negative in practice).
fn rows(count: i64) -> u64 {
    u64::try_from(count).unwrap_or(0)
}

#[uniffi::export]
impl SqlDedupProtocol {
    /// Absent values are the core's defaults (table `royaltykit_dedup`, the dedup window's TTL
    /// and lease). `invalid_argument` for a table that is not a plain identifier, a TTL outside
    /// 1 s to 10 years or a lease outside 1 s to the TTL.
    #[uniffi::constructor(default(table = None, ttl_seconds = None, lease_seconds = None))]
    pub fn new(
        dialect: SqlDialect,
        param_style: ParamStyle,
        table: Option<String>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(SqlDedup::new(
            dialect,
            param_style,
            table.as_deref(),
            ttl_seconds,
            lease_seconds,
        )?)))
    }

    /// A claim token (32 hex characters) from the OS random source.
    pub fn new_token(&self) -> Result<String> {
        Ok(SqlDedup::claim_token(royaltykit_host::random_seed()?))
    }

    /// The dialect the statements are written for.
    pub fn dialect(&self) -> SqlDialect {
        self.0.dialect()
    }

    /// The table's name.
    pub fn table(&self) -> String {
        self.0.table().to_owned()
    }

    /// `NEW` for a returned row; null for none (then run `state`).
    pub fn claim_reply(&self, rows_returned: i64) -> Option<ClaimState> {
        SqlDedup::claim_reply(rows(rows_returned))
    }

    /// `DONE` or `IN_PROGRESS` (the `state` column; null for no row).
    pub fn state_reply(&self, state: Option<String>) -> ClaimState {
        SqlDedup::state_reply(state.as_deref())
    }

    /// What a lookup returned (the `state` column; null for no row): `DONE` for a processed key,
    /// `IN_PROGRESS` for a live claim, `NEW` for no row (never seen, or expired).
    pub fn lookup_reply(&self, state: Option<String>) -> ClaimState {
        SqlDedup::lookup_reply(state.as_deref())
    }

    /// True for one changed row (this claim), false for none (the claim was lost).
    pub fn guarded_reply(&self, rows_changed: i64) -> bool {
        SqlDedup::guarded_reply(rows(rows_changed))
    }
}

crate::generated::sql_dedup_protocol_methods!();
