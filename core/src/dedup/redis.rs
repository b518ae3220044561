//! The dedup contract ([`super::DedupWindow`]'s claim → commit / release, with a lease and a
//! time-to-live) on Redis, for receivers that run as several processes or hosts. Sans I/O: this
//! says which command to send and what its reply means; each language's store sends them with
//! that ecosystem's client (node-redis or ioredis, redis-py, any JVM client).
//!
//! One Redis key per dedup key: `<prefix><key>`, holding `claim:<token>` while a worker holds a
//! claim (expiring after the lease) and `done` once committed (expiring after the TTL).
//!
//! | step | command | reply |
//! |---|---|---|
//! | claim | `SET <k> claim:<token> NX PX <lease ms>` | `OK`: new; nil: then `GET <k>`: `done` → done, anything else (a claim, or nil if it just expired) → in progress |
//! | commit | `EVAL` [`COMMIT_SCRIPT`] `1 <k> claim:<token> <ttl ms>` | 1: done; 0: another worker claimed the key after this claim's lease ran out |
//! | release | `EVAL` [`RELEASE_SCRIPT`] `1 <k> claim:<token>` | 1: released; 0: not this worker's claim (nothing changed) |
//!
//! The token is random per claim (the host's RNG), so a worker whose lease ran out can neither
//! commit nor release a claim another worker took since. Redis must keep the keys across
//! restarts (AOF or RDB persistence) or a restart forgets which deliveries were processed.

use super::window::{ClaimState, DEFAULT_DEDUP_TTL_SECONDS, DEFAULT_LEASE_SECONDS, MAX_KEY_BYTES};
use crate::ArgumentError;

/// The key prefix when none is given.
pub const DEFAULT_REDIS_PREFIX: &str = "royaltykit:dedup:";

/// Commits a claim: sets `done` for the TTL when the key still holds this worker's claim, or no
/// longer exists (its lease ran out and nobody claimed it since); leaves another worker's claim
/// alone. Returns 1 when the key is done, 0 otherwise.
pub const COMMIT_SCRIPT: &str = "local v = redis.call('GET', KEYS[1]) \
if v == ARGV[1] or v == false then redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2]) return 1 end \
if v == 'done' then return 1 end \
return 0";

/// Releases a claim: deletes the key only while it holds this worker's claim. Returns 1 when
/// released, 0 otherwise.
pub const RELEASE_SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
return redis.call('DEL', KEYS[1]) end \
return 0";

/// The TTL and lease of a shared store (Redis, SQL), the dedup window's defaults for those not
/// given: `invalid_argument` for a TTL outside 1 s to 10 years or a lease outside 1 s to the TTL.
pub(super) fn ttl_and_lease(
    ttl_seconds: Option<i64>,
    lease_seconds: Option<i64>,
) -> Result<(i64, i64), ArgumentError> {
    const TEN_YEARS: i64 = 10 * 366 * 86_400;
    let ttl = ttl_seconds.unwrap_or(DEFAULT_DEDUP_TTL_SECONDS);
    if !(1..=TEN_YEARS).contains(&ttl) {
        return Err(ArgumentError::new(
            "ttl_seconds",
            format!("must be 1 to {TEN_YEARS} seconds, got {ttl}"),
        ));
    }
    let lease = lease_seconds.unwrap_or(DEFAULT_LEASE_SECONDS.min(ttl));
    if !(1..=ttl).contains(&lease) {
        return Err(ArgumentError::new(
            "lease_seconds",
            format!("must be 1 to ttl_seconds ({ttl}), got {lease}"),
        ));
    }
    Ok((ttl, lease))
}

/// A dedup key of a shared store: 1 to [`MAX_KEY_BYTES`] bytes.
pub(super) fn store_key(key: &str) -> Result<&str, ArgumentError> {
    if key.is_empty() || key.len() > MAX_KEY_BYTES {
        return Err(ArgumentError::new(
            "key",
            format!("must be 1 to {MAX_KEY_BYTES} bytes, got {}", key.len()),
        ));
    }
    Ok(key)
}

/// A claim token: 16 to 64 ASCII letters and digits (random per claim).
pub(super) fn claim_token_arg(token: &str) -> Result<&str, ArgumentError> {
    if token.len() < 16 || token.len() > 64 || !token.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(ArgumentError::new(
            "token",
            "must be 16 to 64 ASCII letters and digits (random per claim)",
        ));
    }
    Ok(token)
}

/// The value of a committed key.
const DONE: &str = "done";

/// The Redis dedup protocol for one store: its key prefix, lease and time-to-live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisDedup {
    prefix: String,
    lease_ms: String,
    ttl_ms: String,
}

impl RedisDedup {
    /// A protocol with the defaults for values not given: [`DEFAULT_REDIS_PREFIX`], the dedup
    /// window's [`DEFAULT_DEDUP_TTL_SECONDS`] and [`DEFAULT_LEASE_SECONDS`]. Promises:
    /// `invalid_argument` for a prefix over 256 bytes, a TTL outside 1 s to 10 years, or a lease
    /// outside 1 s to the TTL.
    pub fn new(
        prefix: Option<&str>,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
    ) -> Result<Self, ArgumentError> {
        let prefix = prefix.unwrap_or(DEFAULT_REDIS_PREFIX);
        if prefix.len() > 256 {
            return Err(ArgumentError::new("prefix", "must be at most 256 bytes"));
        }
        let (ttl, lease) = ttl_and_lease(ttl_seconds, lease_seconds)?;
        Ok(Self {
            prefix: prefix.to_owned(),
            lease_ms: (lease * 1000).to_string(),
            ttl_ms: (ttl * 1000).to_string(),
        })
    }

    fn redis_key(&self, key: &str) -> Result<String, ArgumentError> {
        Ok(format!("{}{}", self.prefix, store_key(key)?))
    }

    fn claim_value(token: &str) -> Result<String, ArgumentError> {
        Ok(format!("claim:{}", claim_token_arg(token)?))
    }

    /// A claim token from 16 random bytes of the host's RNG: 32 lowercase hex characters.
    pub fn claim_token(random: [u8; 16]) -> String {
        hex::encode(random)
    }

    /// The claim command for `key` by the worker holding `token` (random per claim: 16 to 64
    /// ASCII letters and digits). Promises: `invalid_argument` for a bad key or token.
    pub fn claim_command(&self, key: &str, token: &str) -> Result<Vec<String>, ArgumentError> {
        Ok(vec![
            "SET".to_owned(),
            self.redis_key(key)?,
            Self::claim_value(token)?,
            "NX".to_owned(),
            "PX".to_owned(),
            self.lease_ms.clone(),
        ])
    }

    /// What the claim command's reply means: `Some(New)` for `OK`; `None` for nil (the key
    /// exists: send [`RedisDedup::state_command`] and read its reply with
    /// [`RedisDedup::state_reply`]).
    pub fn claim_reply(reply: Option<&str>) -> Option<ClaimState> {
        (reply == Some("OK")).then_some(ClaimState::New)
    }

    /// The command reading a key's state after a claim found it taken.
    pub fn state_command(&self, key: &str) -> Result<Vec<String>, ArgumentError> {
        Ok(vec!["GET".to_owned(), self.redis_key(key)?])
    }

    /// What a taken key's value means: `done` once committed; anything else — another worker's
    /// claim, or nil when that claim expired in between — is `in_progress` (the service
    /// redelivers, and the next claim decides).
    pub fn state_reply(reply: Option<&str>) -> ClaimState {
        if reply == Some(DONE) {
            ClaimState::Done
        } else {
            ClaimState::InProgress
        }
    }

    /// The read-only lookup of a key's state (delivery recovery): the same `GET` as
    /// [`RedisDedup::state_command`], read with [`RedisDedup::lookup_reply`].
    pub fn lookup_command(&self, key: &str) -> Result<Vec<String>, ArgumentError> {
        self.state_command(key)
    }

    /// What a lookup's reply means, for a key nobody is claiming now: `done` once committed,
    /// `in_progress` for a live claim, and `new` for nil (never seen, or its claim or TTL ran
    /// out) — unlike [`RedisDedup::state_reply`], which reads nil right after a failed claim.
    pub fn lookup_reply(reply: Option<&str>) -> ClaimState {
        match reply {
            None => ClaimState::New,
            Some(DONE) => ClaimState::Done,
            Some(_) => ClaimState::InProgress,
        }
    }

    /// The guarded commit of `key` by the worker holding `token` ([`COMMIT_SCRIPT`]); its reply
    /// is 1 when the key is done, 0 when another worker claimed it after this claim's lease
    /// ran out (the effect may then be applied twice: keep processing shorter than the lease).
    pub fn commit_command(&self, key: &str, token: &str) -> Result<Vec<String>, ArgumentError> {
        Ok(vec![
            "EVAL".to_owned(),
            COMMIT_SCRIPT.to_owned(),
            "1".to_owned(),
            self.redis_key(key)?,
            Self::claim_value(token)?,
            self.ttl_ms.clone(),
        ])
    }

    /// What the reply of the guarded commit or release means: `true` for the integer 1 (this
    /// claim was committed or released), `false` for 0 or anything else (the key no longer holds
    /// this claim: its lease ran out and another worker claimed it). Integer replies are read
    /// as clients give them in decimal text.
    pub fn guarded_reply(reply: Option<&str>) -> bool {
        reply.map(str::trim) == Some("1")
    }

    /// The guarded release of `key` by the worker holding `token` ([`RELEASE_SCRIPT`]); its
    /// reply is 1 when released, 0 when the key no longer holds this claim.
    pub fn release_command(&self, key: &str, token: &str) -> Result<Vec<String>, ArgumentError> {
        Ok(vec![
            "EVAL".to_owned(),
            RELEASE_SCRIPT.to_owned(),
            "1".to_owned(),
            self.redis_key(key)?,
            Self::claim_value(token)?,
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        let r = RedisDedup::new(None, Some(100), Some(5)).unwrap();
        let token = "0123456789abcdef";
        assert_eq!(
            r.claim_command("dlv_1", token).unwrap(),
            [
                "SET",
                "royaltykit:dedup:dlv_1",
                "claim:0123456789abcdef",
                "NX",
                "PX",
                "5000"
            ]
        );
        assert_eq!(
            r.commit_command("dlv_1", token).unwrap()[3..],
            ["royaltykit:dedup:dlv_1", "claim:0123456789abcdef", "100000"]
        );
        assert_eq!(r.release_command("dlv_1", token).unwrap().len(), 5);
        assert_eq!(RedisDedup::claim_reply(Some("OK")), Some(ClaimState::New));
        assert_eq!(RedisDedup::claim_reply(None), None);
        assert_eq!(RedisDedup::state_reply(Some("done")), ClaimState::Done);
        assert_eq!(
            RedisDedup::state_reply(Some("claim:x")),
            ClaimState::InProgress
        );
        assert_eq!(RedisDedup::state_reply(None), ClaimState::InProgress);
        assert!(RedisDedup::guarded_reply(Some("1")));
        assert!(!RedisDedup::guarded_reply(Some("0")));
        assert!(!RedisDedup::guarded_reply(None));
        assert!(r.claim_command("dlv_1", "short").is_err());
        assert!(r.claim_command("", token).is_err());
        assert!(RedisDedup::new(None, Some(10), Some(11)).is_err());
        assert!(RedisDedup::new(Some(&"p".repeat(257)), None, None).is_err());
    }
}
