//! The inbox on a Redis stream: the spec's "persist and return success", then process later, for
//! receivers and workers that share a Redis rather than a SQL database. The same steps as
//! [`super::SqlInbox`] — enqueue, claim, mark done, settle, poison, retry, lookup, counts,
//! purge — each one `EVAL` of a script below, so each step is atomic in Redis. Sans I/O: these
//! are the commands and what their replies mean; each language sends them with its client.
//! Every reply is one nil, integer or bulk string (arrays come as JSON text, encoded by the
//! script), so a client that gives back one string per command is enough.
//!
//! Redis has no transaction shared with the handler's own effects, so a worker runs
//! [`crate::machine::InboxWorker`] with `transactional: false` (`Claim` → `RunHandler` →
//! `MarkDone`): **effects are at least once** (a worker killed after the handler's effect and
//! before the mark runs the handler again once the lease runs out). Make the handler idempotent,
//! or use a SQL inbox for exactly once.
//!
//! Keys, all under one prefix (the default `{royaltykit:inbox}:` carries a hash tag, so every key
//! of an inbox lives in one slot of a Redis Cluster; give a custom prefix a `{…}` tag too):
//!
//! | key | type | holds |
//! |---|---|---|
//! | `<prefix>e:<delivery key>` | hash | the entry: `delivery_id`, `event`, `body`, `state` (`pending`, `done`, `poison`), `attempts`, `received_at`, `last_error`, `msg` (the stream message of its current claim) |
//! | `<prefix>stream` | stream, consumer group `workers` | one message (`key` = the delivery key) per entry ready to be claimed |
//! | `<prefix>delayed` | sorted set | entries waiting for their backoff, scored by the second they are due |
//! | `<prefix>pending`, `<prefix>poison`, `<prefix>done` | sorted sets | entries by state (scored by arrival; `done` by expiry), for counts, listing and purge |
//!
//! | step | script | reply |
//! |---|---|---|
//! | enqueue | [`ENQUEUE_SCRIPT`]: the hash (also the delivery's dedup record) and a stream message, unless the hash exists | 1 new, 0 duplicate (both answered 2xx) |
//! | claim | [`CLAIM_SCRIPT`]: moves due delayed entries to the stream; takes a message whose claim outlived the lease (`XAUTOCLAIM`), else a new one (`XREADGROUP`); counts an attempt | a JSON array: the entry's `key`, `delivery_id`, `event`, `body`, `attempts`; or nil |
//! | mark done | [`MARK_SCRIPT`], guarded by the claim's attempts: acknowledges the message, `done`, expires after the TTL | 1 marked, 0 another worker claimed it since |
//! | settle | [`SETTLE_SCRIPT`], guarded likewise: acknowledges the message, then delayed until the backoff or `poison` | 1 settled, 0 not this claim |
//! | poisoned, retry | [`POISONED_SCRIPT`], [`RETRY_SCRIPT`] | a JSON array of entries; 1 put back, 0 not poison |
//! | lookup | `HGET <entry> state` | as [`super::SqlInbox::lookup_reply`] |
//! | counts, purge | [`COUNTS_SCRIPT`], [`PURGE_SCRIPT`] | a JSON array: pending, done, poison; entries purged |
//!
//! A pending or poison entry never expires; a done entry is kept for the TTL as the delivery's
//! dedup record. Needs Redis 6.2 or later (`XAUTOCLAIM`), with persistence (AOF or RDB) or a
//! restart loses the inbox.

use super::inbox::{check_delivery, InboxEntry, MAX_ERROR_BYTES, MAX_POISON_LISTED};
use super::redis::{store_key, ttl_and_lease};
use super::{cut, ClaimState, SqlInbox, MAX_NAME_BYTES};
use crate::ArgumentError;

/// The key prefix when none is given (a Redis Cluster hash tag: one slot per inbox).
pub const DEFAULT_REDIS_INBOX_PREFIX: &str = "{royaltykit:inbox}:";
/// The stream's consumer group.
pub const REDIS_INBOX_GROUP: &str = "workers";
/// Most delayed entries one claim moves back to the stream.
const PROMOTE_PER_CLAIM: u32 = 100;

/// Adds an entry unless its hash exists (KEYS: entry, stream, pending; ARGV: delivery id, event,
/// body, now, group, delivery key). Replies 1 when added, 0 for a duplicate.
pub const ENQUEUE_SCRIPT: &str = "if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end \
redis.call('HSET', KEYS[1], 'delivery_id', ARGV[1], 'event', ARGV[2], 'body', ARGV[3], \
'state', 'pending', 'attempts', 0, 'received_at', ARGV[4]) \
redis.pcall('XGROUP', 'CREATE', KEYS[2], ARGV[5], '0', 'MKSTREAM') \
redis.call('XADD', KEYS[2], '*', 'key', ARGV[6]) \
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6]) \
return 1";

/// Claims one due entry (KEYS: stream, delayed; ARGV: prefix, now, lease in ms, group, most
/// delayed entries to move). Replies a JSON array of the entry's key, delivery id, event, body and
/// attempts (counted before the handler runs), or nil when nothing is due. Messages of entries
/// no longer pending (a stale copy) are acknowledged and skipped.
pub const CLAIM_SCRIPT: &str = "local now = tonumber(ARGV[2]) \
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[5])) \
for _, k in ipairs(due) do redis.call('XADD', KEYS[1], '*', 'key', k) redis.call('ZREM', KEYS[2], k) end \
redis.pcall('XGROUP', 'CREATE', KEYS[1], ARGV[4], '0', 'MKSTREAM') \
local cursor = '0-0' \
for _ = 1, 1000 do \
local m = nil \
if cursor then \
local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[4], 'worker', ARGV[3], cursor, 'COUNT', 1) \
m = r[2][1] cursor = r[1] if cursor == '0-0' then cursor = nil end \
else \
local r = redis.call('XREADGROUP', 'GROUP', ARGV[4], 'worker', 'COUNT', 1, 'STREAMS', KEYS[1], '>') \
if not r then return false end \
m = r[1][2][1] \
end \
if m and m[2] then \
local e = ARGV[1] .. 'e:' .. m[2][2] \
if redis.call('HGET', e, 'state') == 'pending' then \
local a = redis.call('HINCRBY', e, 'attempts', 1) \
redis.call('HSET', e, 'msg', m[1]) \
local f = redis.call('HMGET', e, 'delivery_id', 'event', 'body') \
return cjson.encode({m[2][2], f[1], f[2], f[3], a}) \
end \
redis.call('XACK', KEYS[1], ARGV[4], m[1]) redis.call('XDEL', KEYS[1], m[1]) \
elseif m then redis.call('XACK', KEYS[1], ARGV[4], m[1]) end \
end \
return false";

/// Marks a claimed entry done (KEYS: entry, stream, pending, done; ARGV: the claim's attempts,
/// group, expiry second, TTL in ms, delivery key). Replies 1 when marked, 0 when the entry no
/// longer holds this claim.
pub const MARK_SCRIPT: &str = "if redis.call('HGET', KEYS[1], 'state') ~= 'pending' \
or redis.call('HGET', KEYS[1], 'attempts') ~= ARGV[1] then return 0 end \
local m = redis.call('HGET', KEYS[1], 'msg') \
if m then redis.call('XACK', KEYS[2], ARGV[2], m) redis.call('XDEL', KEYS[2], m) end \
redis.call('HSET', KEYS[1], 'state', 'done') \
redis.call('HDEL', KEYS[1], 'msg', 'body', 'last_error') \
redis.call('PEXPIRE', KEYS[1], ARGV[4]) \
redis.call('ZREM', KEYS[3], ARGV[5]) \
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[5]) \
return 1";

/// Settles a failed attempt (KEYS: entry, stream, delayed, pending, poison; ARGV: the claim's
/// attempts, group, `poison` or `retry`, the second it is due again, the error, delivery key).
/// Replies 1 when settled, 0 when the entry no longer holds this claim.
pub const SETTLE_SCRIPT: &str = "if redis.call('HGET', KEYS[1], 'state') ~= 'pending' \
or redis.call('HGET', KEYS[1], 'attempts') ~= ARGV[1] then return 0 end \
local m = redis.call('HGET', KEYS[1], 'msg') \
if m then redis.call('XACK', KEYS[2], ARGV[2], m) redis.call('XDEL', KEYS[2], m) end \
redis.call('HDEL', KEYS[1], 'msg') \
redis.call('HSET', KEYS[1], 'last_error', ARGV[5]) \
if ARGV[3] == 'poison' then \
redis.call('HSET', KEYS[1], 'state', 'poison') \
redis.call('ZREM', KEYS[4], ARGV[6]) \
redis.call('ZADD', KEYS[5], redis.call('HGET', KEYS[1], 'received_at'), ARGV[6]) \
else redis.call('ZADD', KEYS[3], ARGV[4], ARGV[6]) end \
return 1";

/// Lists poison entries, oldest first (KEYS: poison; ARGV: prefix, limit). Replies a JSON array
/// of one array per entry: key, delivery id, event, attempts, last error (`false` for none),
/// received at.
pub const POISONED_SCRIPT: &str = "local out = {} \
for _, k in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)) do \
local f = redis.call('HMGET', ARGV[1] .. 'e:' .. k, 'delivery_id', 'event', 'attempts', 'last_error', 'received_at') \
out[#out + 1] = {k, f[1], f[2], f[3], f[4], f[5]} \
end \
if #out == 0 then return '[]' end \
return cjson.encode(out)";

/// Puts a poison entry back to pending with no attempts (KEYS: entry, stream, pending, poison;
/// ARGV: group, delivery key). Replies 1 when put back, 0 when the entry is not poison.
pub const RETRY_SCRIPT: &str =
    "if redis.call('HGET', KEYS[1], 'state') ~= 'poison' then return 0 end \
redis.call('HSET', KEYS[1], 'state', 'pending', 'attempts', 0) \
redis.call('HDEL', KEYS[1], 'last_error', 'msg') \
redis.call('ZREM', KEYS[4], ARGV[2]) \
redis.call('ZADD', KEYS[3], redis.call('HGET', KEYS[1], 'received_at'), ARGV[2]) \
redis.pcall('XGROUP', 'CREATE', KEYS[2], ARGV[1], '0', 'MKSTREAM') \
redis.call('XADD', KEYS[2], '*', 'key', ARGV[2]) \
return 1";

/// Counts entries by state (KEYS: pending, done, poison; ARGV: now): done entries past their
/// expiry are dropped first. Replies a JSON array: pending, done, poison.
pub const COUNTS_SCRIPT: &str = "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1]) \
return cjson.encode({redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[3])})";

/// Forgets done entries past their expiry (KEYS: done; ARGV: now); their hashes expire by
/// themselves. Replies how many.
pub const PURGE_SCRIPT: &str = "return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])";

record! {
/// A poison entry, as an inbox lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxPoisonEntry {
    /// Its delivery key.
    pub key: String,
    /// Its `Service-Webhook-Id`.
    pub delivery_id: String,
    /// Its event name, as sent.
    pub event: String,
    /// Handler runs started.
    pub attempts: u32,
    /// The last handler failure.
    pub last_error: Option<String>,
    /// When it arrived (Unix seconds).
    pub received_at: i64,
}
}

record! {
/// An inbox's entries by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InboxCounts {
    /// Waiting for a worker, claimed or waiting for their backoff.
    pub pending: u64,
    /// Processed, kept as dedup records until their TTL.
    pub done: u64,
    /// Set aside after their last attempt.
    pub poison: u64,
}
}

/// The Redis inbox protocol for one inbox: its key prefix, lease and time-to-live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisInbox {
    prefix: String,
    ttl: i64,
    lease: i64,
}

fn reply_error(what: &str) -> ArgumentError {
    ArgumentError::new(
        "reply",
        format!("is not what the inbox's {what} script replies: is this Redis 6.2 or later, and the prefix only this inbox's?"),
    )
}

/// A script's JSON reply; nil (and an empty string) is `None`.
fn json_reply(reply: Option<&str>, what: &str) -> Result<Option<serde_json::Value>, ArgumentError> {
    match reply.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|_| reply_error(what)),
    }
}

fn json_text(v: Option<&serde_json::Value>) -> Option<String> {
    v.and_then(serde_json::Value::as_str).map(str::to_owned)
}

fn json_number<T: TryFrom<i64>>(
    v: Option<&serde_json::Value>,
    what: &str,
) -> Result<T, ArgumentError> {
    v.and_then(|v| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    })
    .and_then(|n| T::try_from(n).ok())
    .ok_or_else(|| reply_error(what))
}

impl RedisInbox {
    /// A protocol with the defaults for values not given: [`DEFAULT_REDIS_INBOX_PREFIX`], done
    /// entries kept for the dedup window's TTL, and the dedup lease (how long a claim holds an
    /// entry before another worker may take it: keep the handler shorter). Promises
    /// `invalid_argument` for an empty prefix or one over 256 bytes, a TTL outside 1 s to 10
    /// years, or a lease outside 1 s to the TTL.
    pub fn new(
        prefix: Option<&str>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Self, ArgumentError> {
        let prefix = prefix.unwrap_or(DEFAULT_REDIS_INBOX_PREFIX);
        if prefix.is_empty() || prefix.len() > 256 {
            return Err(ArgumentError::new("prefix", "must be 1 to 256 bytes"));
        }
        let (ttl, lease) = ttl_and_lease(ttl_seconds, lease_seconds)?;
        Ok(Self {
            prefix: prefix.to_owned(),
            ttl,
            lease,
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// How long a claim holds an entry, in seconds.
    pub fn lease_seconds(&self) -> i64 {
        self.lease
    }

    fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    fn entry(&self, key: &str) -> Result<String, ArgumentError> {
        Ok(format!("{}e:{}", self.prefix, store_key(key)?))
    }

    fn eval(script: &str, keys: Vec<String>, args: Vec<String>) -> Vec<String> {
        let mut command = vec!["EVAL".to_owned(), script.to_owned(), keys.len().to_string()];
        command.extend(keys);
        command.extend(args);
        command
    }

    /// The command adding a verified delivery at `now`: `key` its delivery key, `delivery_id`
    /// its `Service-Webhook-Id`, `event` its event name, `body` its raw JSON body. Read the reply
    /// with [`RedisInbox::added_reply`]. Promises `invalid_argument` for a bad key, an empty
    /// delivery id, or a body over [`super::MAX_INBOX_BODY_BYTES`].
    pub fn enqueue_command(
        &self,
        key: &str,
        delivery_id: &str,
        event: &str,
        body: &str,
        now: i64,
    ) -> Result<Vec<String>, ArgumentError> {
        check_delivery(delivery_id, body)?;
        Ok(Self::eval(
            ENQUEUE_SCRIPT,
            vec![self.entry(key)?, self.key("stream"), self.key("pending")],
            vec![
                cut(delivery_id, MAX_NAME_BYTES).to_owned(),
                cut(event, MAX_NAME_BYTES).to_owned(),
                body.to_owned(),
                now.to_string(),
                REDIS_INBOX_GROUP.to_owned(),
                key.to_owned(),
            ],
        ))
    }

    /// What an integer reply of enqueue, mark, settle or retry means: `true` for 1 (added,
    /// marked, settled, put back), `false` for 0 or anything else. Integer replies are read as
    /// clients give them in decimal text.
    pub fn added_reply(reply: Option<&str>) -> bool {
        reply.map(str::trim) == Some("1")
    }

    /// The claim of one due entry at `now`. Read the reply with [`RedisInbox::claim_reply`].
    pub fn claim_command(&self, now: i64) -> Vec<String> {
        Self::eval(
            CLAIM_SCRIPT,
            vec![self.key("stream"), self.key("delayed")],
            vec![
                self.prefix.clone(),
                now.to_string(),
                self.lease.saturating_mul(1000).to_string(),
                REDIS_INBOX_GROUP.to_owned(),
                PROMOTE_PER_CLAIM.to_string(),
            ],
        )
    }

    /// What a claim's reply means: the entry, or `None` for nil (nothing due). Promises
    /// `invalid_argument` (argument `reply`) for anything else.
    pub fn claim_reply(reply: Option<&str>) -> Result<Option<InboxEntry>, ArgumentError> {
        let Some(value) = json_reply(reply, "claim")? else {
            return Ok(None);
        };
        let fields = value.as_array().filter(|a| a.len() == 5);
        let Some(fields) = fields else {
            return Err(reply_error("claim"));
        };
        let text = |i: usize| json_text(fields.get(i));
        let (Some(key), Some(delivery_id), Some(event), Some(body)) =
            (text(0), text(1), text(2), text(3))
        else {
            return Err(reply_error("claim"));
        };
        Ok(Some(InboxEntry {
            key,
            delivery_id,
            event,
            body,
            attempts: json_number(fields.get(4), "claim")?,
        }))
    }

    /// The mark of `key` done by the claim that counted `attempts`, at `now`; the entry is kept
    /// for the TTL as the delivery's dedup record. Reply: [`RedisInbox::added_reply`] (`false`:
    /// another worker claimed the entry after this claim's lease ran out). Promises
    /// `invalid_argument` for a bad key.
    pub fn mark_done_command(
        &self,
        key: &str,
        attempts: u32,
        now: i64,
    ) -> Result<Vec<String>, ArgumentError> {
        Ok(Self::eval(
            MARK_SCRIPT,
            vec![
                self.entry(key)?,
                self.key("stream"),
                self.key("pending"),
                self.key("done"),
            ],
            vec![
                attempts.to_string(),
                REDIS_INBOX_GROUP.to_owned(),
                now.saturating_add(self.ttl).to_string(),
                self.ttl.saturating_mul(1000).to_string(),
                key.to_owned(),
            ],
        ))
    }

    /// The settling of a failed attempt of `key` (the claim that counted `attempts`): pending
    /// again from `retry_at`, or `poison`, with `error` (cut to [`MAX_ERROR_BYTES`]). Reply:
    /// [`RedisInbox::added_reply`]. Promises `invalid_argument` for a bad key.
    pub fn settle_command(
        &self,
        key: &str,
        attempts: u32,
        poison: bool,
        retry_at: i64,
        error: &str,
    ) -> Result<Vec<String>, ArgumentError> {
        Ok(Self::eval(
            SETTLE_SCRIPT,
            vec![
                self.entry(key)?,
                self.key("stream"),
                self.key("delayed"),
                self.key("pending"),
                self.key("poison"),
            ],
            vec![
                attempts.to_string(),
                REDIS_INBOX_GROUP.to_owned(),
                if poison { "poison" } else { "retry" }.to_owned(),
                retry_at.to_string(),
                cut(error, MAX_ERROR_BYTES).to_owned(),
                key.to_owned(),
            ],
        ))
    }

    /// The listing of poison entries, oldest first, at most `limit` (1 to
    /// [`MAX_POISON_LISTED`]); read it with [`RedisInbox::poisoned_reply`]. Promises
    /// `invalid_argument` for a limit out of range.
    pub fn poisoned_command(&self, limit: u32) -> Result<Vec<String>, ArgumentError> {
        if !(1..=MAX_POISON_LISTED).contains(&limit) {
            return Err(ArgumentError::new(
                "limit",
                format!("must be 1 to {MAX_POISON_LISTED}, got {limit}"),
            ));
        }
        Ok(Self::eval(
            POISONED_SCRIPT,
            vec![self.key("poison")],
            vec![self.prefix.clone(), limit.to_string()],
        ))
    }

    /// The poison entries of a listing's reply. Promises `invalid_argument` (argument `reply`)
    /// for a reply of another shape.
    pub fn poisoned_reply(reply: Option<&str>) -> Result<Vec<InboxPoisonEntry>, ArgumentError> {
        let value = json_reply(reply, "poisoned")?.unwrap_or_default();
        let rows = match &value {
            serde_json::Value::Null => return Ok(Vec::new()),
            serde_json::Value::Object(o) if o.is_empty() => return Ok(Vec::new()),
            serde_json::Value::Array(rows) => rows,
            _ => return Err(reply_error("poisoned")),
        };
        rows.iter()
            .map(|row| {
                let row = row
                    .as_array()
                    .filter(|r| r.len() == 6)
                    .ok_or_else(|| reply_error("poisoned"))?;
                Ok(InboxPoisonEntry {
                    key: json_text(row.first()).unwrap_or_default(),
                    delivery_id: json_text(row.get(1)).unwrap_or_default(),
                    event: json_text(row.get(2)).unwrap_or_default(),
                    attempts: json_number(row.get(3), "poisoned")?,
                    last_error: json_text(row.get(4)),
                    received_at: json_number(row.get(5), "poisoned")?,
                })
            })
            .collect()
    }

    /// The command putting a poison entry back to pending with no attempts counted (an
    /// operator fixed the cause). Reply: [`RedisInbox::added_reply`] (`false`: not poison).
    /// Promises `invalid_argument` for a bad key.
    pub fn retry_command(&self, key: &str) -> Result<Vec<String>, ArgumentError> {
        Ok(Self::eval(
            RETRY_SCRIPT,
            vec![
                self.entry(key)?,
                self.key("stream"),
                self.key("pending"),
                self.key("poison"),
            ],
            vec![REDIS_INBOX_GROUP.to_owned(), key.to_owned()],
        ))
    }

    /// The read-only lookup of `key` (delivery recovery): `HGET <entry> state`, read with
    /// [`RedisInbox::lookup_reply`]. Promises `invalid_argument` for a bad key.
    pub fn lookup_command(&self, key: &str) -> Result<Vec<String>, ArgumentError> {
        Ok(vec![
            "HGET".to_owned(),
            self.entry(key)?,
            "state".to_owned(),
        ])
    }

    /// What a lookup means: nil `new` (never received, or done and past its TTL), `done`
    /// processed, anything else (`pending`, `poison`) `in_progress`: received, so a replay
    /// would not help.
    pub fn lookup_reply(reply: Option<&str>) -> ClaimState {
        SqlInbox::lookup_reply(reply)
    }

    /// The count of entries by state at `now`; read it with [`RedisInbox::counts_reply`].
    pub fn counts_command(&self, now: i64) -> Vec<String> {
        Self::eval(
            COUNTS_SCRIPT,
            vec![self.key("pending"), self.key("done"), self.key("poison")],
            vec![now.to_string()],
        )
    }

    /// The counts of a counts reply. Promises `invalid_argument` (argument `reply`) for a reply
    /// of another shape.
    pub fn counts_reply(reply: Option<&str>) -> Result<InboxCounts, ArgumentError> {
        let value = json_reply(reply, "counts")?;
        let Some(n) = value
            .as_ref()
            .and_then(|v| v.as_array())
            .filter(|a| a.len() == 3)
        else {
            return Err(reply_error("counts"));
        };
        Ok(InboxCounts {
            pending: json_number(n.first(), "counts")?,
            done: json_number(n.get(1), "counts")?,
            poison: json_number(n.get(2), "counts")?,
        })
    }

    /// The command forgetting done entries past their TTL at `now` (their hashes expire by
    /// themselves); its integer reply is how many. Run it now and then.
    pub fn purge_command(&self, now: i64) -> Vec<String> {
        Self::eval(PURGE_SCRIPT, vec![self.key("done")], vec![now.to_string()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_replies() {
        let inbox = RedisInbox::new(Some("{t}:"), Some(100), Some(30)).unwrap();
        let add = inbox.enqueue_command("k", "d", "e", "{}", 7).unwrap();
        assert_eq!(&add[..3], &["EVAL", ENQUEUE_SCRIPT, "3"]);
        assert_eq!(&add[3..6], &["{t}:e:k", "{t}:stream", "{t}:pending"]);
        assert_eq!(&add[6..], &["d", "e", "{}", "7", "workers", "k"]);
        let claim = inbox.claim_command(1000);
        assert_eq!(&claim[5..], &["{t}:", "1000", "30000", "workers", "100"]);
        let mark = inbox.mark_done_command("k", 2, 1000).unwrap();
        assert_eq!(&mark[7..], &["2", "workers", "1100", "100000", "k"]);
        let settle = inbox
            .settle_command("k", 5, true, 1005, &"x".repeat(5000))
            .unwrap();
        assert_eq!(settle[10], "poison");
        assert_eq!(settle[12].len(), MAX_ERROR_BYTES);
        assert!(inbox.enqueue_command("", "d", "e", "{}", 1).is_err());
        assert!(inbox.enqueue_command("k", "", "e", "{}", 1).is_err());
        assert!(inbox.poisoned_command(0).is_err());
        assert!(RedisInbox::new(Some(""), None, None).is_err());
        assert_eq!(RedisInbox::claim_reply(None).unwrap(), None);
        let entry = RedisInbox::claim_reply(Some(r#"["k","d","e","{\"a\":1}",3]"#))
            .unwrap()
            .unwrap();
        assert_eq!((entry.key.as_str(), entry.attempts), ("k", 3));
        assert_eq!(entry.body, r#"{"a":1}"#);
        assert!(RedisInbox::claim_reply(Some(r#"["k","d"]"#)).is_err());
        assert!(RedisInbox::claim_reply(Some(r#"["k","d","e","{}",-1]"#)).is_err());
        assert!(RedisInbox::claim_reply(Some("not json")).is_err());
        let listed = RedisInbox::poisoned_reply(Some(
            r#"[["k","d","e",5,"boom",9],["k2","d2","e",5,false,10]]"#,
        ))
        .unwrap();
        assert_eq!(listed[1].last_error, None);
        assert_eq!(listed[0].received_at, 9);
        assert_eq!(RedisInbox::poisoned_reply(Some("{}")).unwrap(), vec![]);
        assert!(RedisInbox::poisoned_reply(Some(r#"[["k"]]"#)).is_err());
        let counts = RedisInbox::counts_reply(Some("[1,2,3]")).unwrap();
        assert_eq!((counts.pending, counts.done, counts.poison), (1, 2, 3));
        assert!(RedisInbox::counts_reply(Some("[1]")).is_err());
        assert!(RedisInbox::added_reply(Some("1")) && !RedisInbox::added_reply(Some("0")));
        assert_eq!(RedisInbox::lookup_reply(None), ClaimState::New);
    }
}
