//! [`Fleet`]: the processes of one API client sharing one token and one rate budget through
//! Redis (the enterprise spec's limits hold "per API client": 600 requests a minute, 1,200 per
//! organization, 180 per source address, and the token exchange has "tighter credential and
//! source limits"). Sans I/O like the Redis dedup store: these are the commands and what their
//! replies mean; each language sends them with its Redis client.
//!
//! **The rate budget.** A [`Session`] made with [`Fleet::session`] counts its calls' requests in
//! Redis, not in the process: before each send a call asks [`super::Step::Reserve`], whose
//! command runs [`RESERVE_SCRIPT`] — for every window of the budget, a sorted set of the
//! fleet's requests by second, trimmed as [`crate::retry::RateBudget`] trims its log (a request
//! at second `s` keeps its place until `s + length + 2`: the truncation to the second and a
//! second of latency spread), and the request counted in all windows
//! only when all have room. The call then sends at once, or waits until the first second every
//! full window has room again. A reservation is used in the second it was made or made again,
//! so the fleet's count never runs behind the service's. The hosts' clocks must agree to within
//! a second (one machine, or NTP).
//!
//! **The token.** When a call of a fleet session must obtain a token (`RefreshToken`), the host
//! runs a [`FleetToken`] instead of the exchange: it adopts the token another process published
//! (`GET`), unless that is the very token being replaced (due, or refused with 401); otherwise
//! it takes the fleet's exchange lock (`SET NX PX`, for [`EXCHANGE_LEASE_SECONDS`]) and looks
//! once more (a token published between the first look and the lock is adopted, the lock
//! released), and only then the holder exchanges and publishes the token ([`PUBLISH_SCRIPT`]: the token with its refresh
//! time, the lock released); the others wait and adopt it. One exchange per fleet. The token is
//! stored in Redis: protect that Redis as you protect the API secret.

use super::session::Session;
use super::EXCHANGE_LEASE_SECONDS;
use crate::bearer::BearerToken;
use crate::catalog::Api;
use crate::retry::RateBudget;
use crate::ArgumentError;
use serde_json::{json, Value};

/// The key prefix when none is given.
pub const DEFAULT_FLEET_PREFIX: &str = "royaltykit:fleet:";
/// Longest key prefix, in bytes.
pub const MAX_FLEET_PREFIX_BYTES: usize = 128;
/// How long a process waits before looking again while another holds the exchange lock.
pub const FLEET_POLL_SECONDS: f64 = 0.1;

/// Reserves one request in every window (KEYS: one sorted set per window, in the budget's
/// order; ARGV: now (whole seconds), a unique member, then each window's limit and length). A
/// request at second `s` keeps its place until `s + length + 2`, as in
/// [`crate::retry::RateBudget`] ([`crate::retry::RATE_MARGIN_SECONDS`]).
/// Replies `ok`, or `wait <second> <window>` (the first second every full window has room
/// again, and the 1-based index of the first full window).
pub const RESERVE_SCRIPT: &str = "local now = tonumber(ARGV[1]) \
local wait = nil local first = nil \
for i, key in ipairs(KEYS) do \
local limit = tonumber(ARGV[1 + 2 * i]) local len = tonumber(ARGV[2 + 2 * i]) \
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - len - 2) \
if redis.call('ZCARD', key) >= limit then \
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES') \
local free = tonumber(oldest[2]) + len + 2 \
if wait == nil or free > wait then wait = free end \
if first == nil then first = i end \
end end \
if wait then return 'wait ' .. wait .. ' ' .. first end \
for i, key in ipairs(KEYS) do \
redis.call('ZADD', key, now, ARGV[2]) \
redis.call('EXPIRE', key, tonumber(ARGV[2 + 2 * i]) + 3) \
end \
return 'ok'";

/// Publishes the token the lock holder obtained and releases the lock (KEYS: token, lock; ARGV:
/// the token's record, the holder, its time-to-live in milliseconds or `0` for none). Replies 1.
pub const PUBLISH_SCRIPT: &str = "if tonumber(ARGV[3]) > 0 then \
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3]) else redis.call('SET', KEYS[1], ARGV[1]) end \
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end \
return 1";

/// Releases the exchange lock when this process still holds it (KEYS: lock; ARGV: the holder).
pub const UNLOCK_SCRIPT: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
return redis.call('DEL', KEYS[1]) end return 0";

/// Where one API client's fleet keeps its shared state in Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fleet {
    prefix: String,
}

impl Fleet {
    /// A fleet under `prefix` (default [`DEFAULT_FLEET_PREFIX`]): give each API client its own
    /// (for example the prefix and the API key's id), so two clients never share a budget.
    /// Promises `invalid_argument` for an empty prefix, one over [`MAX_FLEET_PREFIX_BYTES`] or
    /// one with spaces or control characters.
    pub fn new(prefix: Option<&str>) -> Result<Self, ArgumentError> {
        let prefix = prefix.unwrap_or(DEFAULT_FLEET_PREFIX);
        if prefix.is_empty()
            || prefix.len() > MAX_FLEET_PREFIX_BYTES
            || prefix.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(ArgumentError::new(
                "prefix",
                format!("must be 1 to {MAX_FLEET_PREFIX_BYTES} bytes without spaces or control characters"),
            ));
        }
        Ok(Self {
            prefix: prefix.to_owned(),
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// A session whose token and rate budget are the fleet's: `budget`'s windows are counted in
    /// Redis ([`RESERVE_SCRIPT`]), and a `RefreshToken` of its calls is a [`FleetToken`].
    pub fn session(&self, budget: Option<RateBudget>) -> Session {
        Session::in_fleet(budget, self.clone())
    }

    fn token_key(&self) -> String {
        format!("{}token", self.prefix)
    }

    fn lock_key(&self) -> String {
        format!("{}exchange", self.prefix)
    }

    /// The reservation command of one request at second `now` for `budget`'s windows, with a
    /// member unique to this request (from the call's seed).
    pub(crate) fn reserve_command(
        &self,
        budget: &RateBudget,
        now: i64,
        member: u64,
    ) -> Vec<String> {
        let windows = budget.windows();
        let mut command = vec![
            "EVAL".to_owned(),
            RESERVE_SCRIPT.to_owned(),
            windows.len().to_string(),
        ];
        command.extend(
            windows
                .iter()
                .map(|(name, _, _)| format!("{}rate:{name}", self.prefix)),
        );
        command.push(now.to_string());
        command.push(format!("{now}-{member:016x}"));
        for (_, limit, seconds) in &windows {
            command.push(limit.to_string());
            command.push(seconds.to_string());
        }
        command
    }
}

/// What a reservation's reply means: `Ok(())` to send now, or `Err((second, window))`: wait
/// until that second, the window's name. A reply that is neither (a Redis that answered
/// something else) waits a second.
pub(crate) fn reserve_reply(
    reply: Option<&str>,
    windows: &[String],
    now: i64,
) -> Result<(), (i64, String)> {
    match reply.map(str::trim) {
        Some("ok") => Ok(()),
        Some(text) if text.starts_with("wait ") => {
            let mut parts = text.split(' ').skip(1);
            let until = parts.next().and_then(|s| s.parse::<i64>().ok());
            let which = parts
                .next()
                .and_then(|s| s.parse::<usize>().ok())
                .and_then(|i| i.checked_sub(1))
                .and_then(|i| windows.get(i))
                .cloned();
            Err((
                until.filter(|u| *u > now).unwrap_or(now + 1),
                which.unwrap_or_default(),
            ))
        }
        _ => Err((now + 1, String::new())),
    }
}

step_enum! {
/// What the host does next for a fleet token. Python's and Node's step types are derived from it
/// (a Python class per variant whose `repr` is the redacting `Debug` below; a TypeScript union
/// tagged by `step`); Kotlin wraps the command in a redacting class of its own.
#[derive(Clone, PartialEq)]
pub enum FleetTokenStep {
    /// Send `command` to Redis, then report [`FleetToken::replied`] with its reply as text (nil:
    /// none), or [`FleetToken::redis_failed`].
    Command {
        /// The command and its arguments (the publish carries the token: never log them).
        command: Vec<String>,
    },
    /// This process exchanges: run the token exchange, then report [`FleetToken::exchanged`] or
    /// [`FleetToken::exchange_failed`].
    Exchange {},
    /// Another process is exchanging: wait `seconds`, then report [`FleetToken::waited`].
    Wait {
        /// How long.
        seconds: f64,
    },
    /// The session has the fleet's token: wake the calls waiting on it.
    Done {},
    /// The exchange failed (reported to the session: its waiting calls fail); wake them.
    Failed {
        /// Why.
        reason: String,
    },
}
}

impl std::fmt::Debug for FleetTokenStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The command's name and first key only: the publish carries the token. An `EVAL`'s
            // first key follows its script and key count; any other command's is its first argument.
            Self::Command { command } => {
                let name = command.first();
                let key = if name.is_some_and(|n| n.eq_ignore_ascii_case("EVAL")) {
                    command.get(3)
                } else {
                    command.get(1)
                };
                f.debug_struct("Command")
                    .field("command", &name)
                    .field("key", &key)
                    .finish_non_exhaustive()
            }
            Self::Exchange {} => f.write_str("Exchange"),
            Self::Wait { seconds } => f.debug_struct("Wait").field("seconds", seconds).finish(),
            Self::Done {} => f.write_str("Done"),
            Self::Failed { reason } => f.debug_struct("Failed").field("reason", reason).finish(),
        }
    }
}

#[derive(Clone, PartialEq)]
enum Phase {
    Get,
    Lock,
    /// The lock is this process's: look once more (a token published between the first look
    /// and the lock is adopted, not exchanged again).
    Recheck,
    /// A token adopted while holding the lock: release it.
    Release,
    Exchanging,
    Waiting,
    Publish(BearerToken, Option<f64>, Vec<String>),
    Unlock(String),
    Done,
    Failed(String),
}

/// One token refresh of a fleet session (see the module documentation): ask
/// [`FleetToken::next`], perform the step, report its outcome, until `Done` or `Failed`.
#[derive(Clone)]
pub struct FleetToken {
    fleet: Fleet,
    api: Api,
    tenant: Option<String>,
    owner: String,
    /// The token being replaced (due, or refused): never adopted again.
    replacing: Option<String>,
    lease_ms: u64,
    phase: Phase,
    /// When this refresh started: a lock held longer than the lease is taken over.
    started: f64,
}

impl std::fmt::Debug for FleetToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetToken")
            .field("prefix", &self.fleet.prefix)
            .field("next", &self.next())
            .finish_non_exhaustive()
    }
}

/// What became of the step a [`FleetToken`] gave the host: its one input
/// ([`FleetToken::report`]).
pub enum FleetOutcome<'a> {
    /// A `Command`'s reply (its text; `None` for nil).
    Reply(Option<&'a str>),
    /// A `Command`: the fleet's Redis could not be reached.
    NoResponse,
    /// The `Exchange` this process ran obtained `token`, due at the Unix second given (`None`:
    /// never due).
    Token(BearerToken, Option<f64>),
    /// The `Exchange` this process ran failed, for this reason (never a credential).
    Failed(&'a str),
    /// The `Wait` is over.
    Done,
}

// Never a reply's text: the token record the fleet publishes is one.
impl std::fmt::Debug for FleetOutcome<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Reply(reply) => f
                .debug_struct("Reply")
                .field("bytes", &reply.map(str::len))
                .finish(),
            Self::NoResponse => f.write_str("NoResponse"),
            Self::Token(token, refresh_at) => f
                .debug_tuple("Token")
                .field(token)
                .field(refresh_at)
                .finish(),
            Self::Failed(reason) => f.debug_tuple("Failed").field(reason).finish(),
            Self::Done => f.write_str("Done"),
        }
    }
}

impl FleetToken {
    /// A refresh for `session` (a fleet session) of a token of `api` (`tenant` for a reporting
    /// token), at `now`, by the process named by `seed` (the host's RNG). Promises
    /// `invalid_argument` for a session that is not a fleet's, or a `now` that is not finite.
    pub fn new(
        session: &Session,
        api: Api,
        tenant: Option<&str>,
        seed: u64,
        now: f64,
    ) -> Result<Self, ArgumentError> {
        let (now, _) = super::check_now(now)?;
        let fleet = session.fleet().cloned().ok_or_else(|| {
            ArgumentError::new("session", "is not a fleet's session (Fleet::session)")
        })?;
        Ok(Self {
            fleet,
            api,
            tenant: tenant.map(str::to_owned),
            owner: format!("{seed:016x}"),
            replacing: session.token_value().map(str::to_owned),
            lease_ms: (EXCHANGE_LEASE_SECONDS * 1000.0) as u64,
            phase: Phase::Get,
            started: now,
        })
    }

    /// The step pending; the same until its outcome is reported.
    pub fn next(&self) -> FleetTokenStep {
        let cmd = |c: Vec<String>| FleetTokenStep::Command { command: c };
        match &self.phase {
            Phase::Get | Phase::Recheck => cmd(vec!["GET".to_owned(), self.fleet.token_key()]),
            Phase::Lock => cmd(vec![
                "SET".to_owned(),
                self.fleet.lock_key(),
                self.owner.clone(),
                "NX".to_owned(),
                "PX".to_owned(),
                self.lease_ms.to_string(),
            ]),
            Phase::Exchanging => FleetTokenStep::Exchange {},
            Phase::Waiting => FleetTokenStep::Wait {
                seconds: FLEET_POLL_SECONDS,
            },
            Phase::Publish(_, _, command) => cmd(command.clone()),
            Phase::Unlock(_) | Phase::Release => cmd(vec![
                "EVAL".to_owned(),
                UNLOCK_SCRIPT.to_owned(),
                "1".to_owned(),
                self.fleet.lock_key(),
                self.owner.clone(),
            ]),
            Phase::Done => FleetTokenStep::Done {},
            Phase::Failed(reason) => FleetTokenStep::Failed {
                reason: reason.clone(),
            },
        }
    }

    /// A published token record this refresh may adopt at `now`: another token than the one
    /// being replaced, of this API and tenant, not due.
    fn adoptable(&self, reply: &str, now: f64) -> Option<(BearerToken, Option<f64>)> {
        let record: Value = serde_json::from_str(reply).ok()?;
        let value = record.get("v")?.as_str()?;
        if Some(value) == self.replacing.as_deref() || value.is_empty() {
            return None;
        }
        if record.get("a")?.as_str()? != self.api.as_str() {
            return None;
        }
        let tenant = record.get("t").and_then(Value::as_str);
        if tenant != self.tenant.as_deref() {
            return None;
        }
        let refresh_at = record.get("r").and_then(Value::as_f64);
        if refresh_at.is_some_and(|r| r <= now) {
            return None;
        }
        let token = BearerToken::new(self.api, value);
        let token = match tenant {
            Some(t) => token.for_tenant(t),
            None => token,
        };
        Some((token, refresh_at))
    }

    /// The reply of the pending `Command` (its text; `None` for nil), at `now`. Promises
    /// `invalid_argument` when no command is pending.
    pub fn replied(
        &mut self,
        reply: Option<&str>,
        session: &mut Session,
        now: f64,
    ) -> Result<(), ArgumentError> {
        let (now, _) = super::check_now(now)?;
        self.phase = match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Get => match reply.and_then(|r| self.adoptable(r, now)) {
                Some((token, refresh_at)) => {
                    session.store_token(token, refresh_at);
                    Phase::Done
                }
                None => Phase::Lock,
            },
            Phase::Lock if reply == Some("OK") => Phase::Recheck,
            Phase::Lock => Phase::Waiting,
            Phase::Recheck => match reply.and_then(|r| self.adoptable(r, now)) {
                Some((token, refresh_at)) => {
                    session.store_token(token, refresh_at);
                    Phase::Release
                }
                None => Phase::Exchanging,
            },
            Phase::Release => Phase::Done,
            Phase::Publish(token, refresh_at, _) => {
                session.store_token(token, refresh_at);
                Phase::Done
            }
            Phase::Unlock(reason) => {
                session.exchange_failed(&reason);
                Phase::Failed(reason)
            }
            other => {
                self.phase = other;
                return Err(super::unexpected("a Redis reply", "another input"));
            }
        };
        Ok(())
    }

    /// Redis could not be reached for the pending `Command`: the refresh goes on without it —
    /// this process exchanges on its own (a fleet without Redis is a set of single processes),
    /// and its token is stored in the session. Promises `invalid_argument` when no command is
    /// pending.
    pub fn redis_failed(&mut self, session: &mut Session) -> Result<(), ArgumentError> {
        self.phase = match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Get | Phase::Lock | Phase::Recheck => Phase::Exchanging,
            Phase::Release => Phase::Done,
            Phase::Publish(token, refresh_at, _) => {
                session.store_token(token, refresh_at);
                Phase::Done
            }
            Phase::Unlock(reason) => {
                session.exchange_failed(&reason);
                Phase::Failed(reason)
            }
            other => {
                self.phase = other;
                return Err(super::unexpected("a Redis failure", "another input"));
            }
        };
        Ok(())
    }

    /// The wait is over: look for the token again (after the lease, the lock of a process that
    /// died mid-exchange has expired and this one takes it).
    pub fn waited(&mut self) -> Result<(), ArgumentError> {
        if self.phase != Phase::Waiting {
            return Err(super::unexpected("a wait", "another input"));
        }
        self.phase = Phase::Get;
        Ok(())
    }

    /// The exchange this process ran succeeded with `token` (due at `refresh_at`, Unix seconds;
    /// none: never due) at `now`: it is published for the fleet. Promises `invalid_argument`
    /// when no exchange is pending.
    pub fn exchanged(
        &mut self,
        token: BearerToken,
        refresh_at: Option<f64>,
        now: f64,
    ) -> Result<(), ArgumentError> {
        let (now, _) = super::check_now(now)?;
        if self.phase != Phase::Exchanging {
            return Err(super::unexpected("a token", "another input"));
        }
        let refresh_at = refresh_at.filter(|r| r.is_finite());
        let record = json!({
            "v": token.value(),
            "r": refresh_at,
            "a": token.api().as_str(),
            "t": token.tenant_id(),
        })
        .to_string();
        let ttl_ms = refresh_at.map_or(0, |r| (((r - now) * 1000.0).max(1000.0)) as u64);
        let command = vec![
            "EVAL".to_owned(),
            PUBLISH_SCRIPT.to_owned(),
            "2".to_owned(),
            self.fleet.token_key(),
            self.fleet.lock_key(),
            record,
            self.owner.clone(),
            ttl_ms.to_string(),
        ];
        self.phase = Phase::Publish(token, refresh_at, command);
        Ok(())
    }

    /// The exchange this process ran failed (`reason`, never a credential): the lock is
    /// released, then the session's waiting calls fail. Promises `invalid_argument` when no
    /// exchange is pending.
    pub fn exchange_failed(&mut self, reason: &str) -> Result<(), ArgumentError> {
        if self.phase != Phase::Exchanging {
            return Err(super::unexpected("an exchange failure", "another input"));
        }
        self.phase = Phase::Unlock(reason.chars().take(1024).collect());
        Ok(())
    }

    /// What became of the pending step, at `now`: the one input of a refresh (the other inputs
    /// are its parts, which say what each promises: [`FleetToken::replied`],
    /// [`FleetToken::redis_failed`], [`FleetToken::exchanged`], [`FleetToken::exchange_failed`],
    /// [`FleetToken::waited`]). An outcome the pending step cannot have is `invalid_argument`,
    /// the refresh unchanged.
    pub fn report(
        &mut self,
        outcome: FleetOutcome<'_>,
        session: &mut Session,
        now: f64,
    ) -> Result<(), ArgumentError> {
        match outcome {
            FleetOutcome::Reply(reply) => self.replied(reply, session, now),
            FleetOutcome::NoResponse => self.redis_failed(session),
            FleetOutcome::Token(token, refresh_at) => self.exchanged(token, refresh_at, now),
            FleetOutcome::Failed(reason) => self.exchange_failed(reason),
            FleetOutcome::Done => self.waited(),
        }
    }

    /// The command releasing the fleet's exchange lock when this refresh holds it (its exchange
    /// is running), for a host whose call was cancelled mid-exchange: take it, call
    /// [`Session::abandon_exchange`] (the process's waiting calls go on at once), then send it
    /// (best effort), so the fleet's other processes need not wait out the lease. `None` when
    /// this refresh holds no lock.
    pub fn abandon_command(&self) -> Option<Vec<String>> {
        matches!(self.phase, Phase::Recheck | Phase::Exchanging).then(|| {
            vec![
                "EVAL".to_owned(),
                UNLOCK_SCRIPT.to_owned(),
                "1".to_owned(),
                self.fleet.lock_key(),
                self.owner.clone(),
            ]
        })
    }

    /// Seconds since this refresh started, at `now` (hosts bound their wait with it).
    pub fn elapsed(&self, now: f64) -> f64 {
        (now - self.started).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::{Call, CallOptions, Step};
    use crate::request::RequestParams;

    #[test]
    fn the_script_keeps_a_place_as_long_as_the_in_process_budget() {
        let m = crate::retry::RATE_MARGIN_SECONDS;
        assert!(RESERVE_SCRIPT.contains(&format!("'-inf', now - len - {m})")));
        assert!(RESERVE_SCRIPT.contains(&format!("tonumber(oldest[2]) + len + {m} ")));
        assert!(RESERVE_SCRIPT.contains(&format!("tonumber(ARGV[2 + 2 * i]) + {})", m + 1)));
    }

    #[test]
    fn a_token_refused_with_401_is_not_adopted_again_from_redis() {
        let fleet = Fleet::new(Some("t:")).unwrap();
        let mut session = fleet.session(None);
        session.store_token(BearerToken::enterprise("et_1"), Some(5000.0));
        let mut call = Call::new(
            "listEnterpriseCountries",
            RequestParams::default(),
            CallOptions::default(),
        )
        .unwrap();
        assert!(matches!(
            call.next_in(1000.0, &mut session).unwrap(),
            Step::Send { .. }
        ));
        let no_headers: &[(String, String)] = &[];
        call.response(401, no_headers, b"{}", 1000.5).unwrap();
        assert!(matches!(
            call.next_in(1000.5, &mut session).unwrap(),
            Step::RefreshToken { .. }
        ));
        let mut ft = FleetToken::new(&session, Api::Enterprise, None, 1, 1000.5).unwrap();
        // Redis still holds the refused token, not yet due: it must not come back.
        let published = r#"{"a":"enterprise","r":5000.0,"t":null,"v":"et_1"}"#;
        ft.replied(Some(published), &mut session, 1000.5).unwrap();
        assert!(
            matches!(ft.next(), FleetTokenStep::Command { ref command } if command[0] == "SET")
        );
        ft.replied(Some("OK"), &mut session, 1000.5).unwrap();
        // Holding the lock, it looks once more: still only the refused token.
        assert!(
            matches!(ft.next(), FleetTokenStep::Command { ref command } if command[0] == "GET")
        );
        ft.replied(Some(published), &mut session, 1000.5).unwrap();
        assert_eq!(ft.next(), FleetTokenStep::Exchange {});
        let unlock = ft.abandon_command().unwrap();
        assert_eq!(unlock[1], UNLOCK_SCRIPT);
        ft.exchanged(BearerToken::enterprise("et_2"), None, 1000.6)
            .unwrap();
        assert!(
            ft.abandon_command().is_none(),
            "the lock is released by the publish"
        );
        ft.replied(Some("1"), &mut session, 1000.6).unwrap();
        assert_eq!(ft.next(), FleetTokenStep::Done {});
        assert_eq!(session.token_value(), Some("et_2"));
    }

    #[test]
    fn a_token_published_between_the_first_look_and_the_lock_is_adopted_not_exchanged_again() {
        let fleet = Fleet::new(Some("t:")).unwrap();
        let mut session = fleet.session(None);
        let mut ft = FleetToken::new(&session, Api::Enterprise, None, 3, 10.0).unwrap();
        ft.replied(None, &mut session, 10.0).unwrap(); // nothing published yet
                                                       // Another process publishes (and releases its lock); this one's lock succeeds.
        ft.replied(Some("OK"), &mut session, 10.1).unwrap();
        let other = r#"{"a":"enterprise","r":900.0,"t":null,"v":"et_other"}"#;
        ft.replied(Some(other), &mut session, 10.1).unwrap();
        assert!(
            matches!(ft.next(), FleetTokenStep::Command { ref command } if command[1] == UNLOCK_SCRIPT)
        );
        assert_eq!(session.token_value(), Some("et_other"));
        ft.replied(Some("1"), &mut session, 10.1).unwrap();
        assert_eq!(ft.next(), FleetTokenStep::Done {});
    }

    #[test]
    fn a_publish_step_never_prints_the_token() {
        let fleet = Fleet::new(None).unwrap();
        let mut session = fleet.session(None);
        let mut ft = FleetToken::new(&session, Api::Enterprise, None, 7, 10.0).unwrap();
        ft.replied(None, &mut session, 10.0).unwrap();
        ft.replied(Some("OK"), &mut session, 10.0).unwrap();
        ft.replied(None, &mut session, 10.0).unwrap();
        ft.exchanged(BearerToken::enterprise("SECRET-TOKEN"), Some(100.0), 10.0)
            .unwrap();
        let shown = format!("{:?} {:?}", ft.next(), ft);
        assert!(!shown.contains("SECRET-TOKEN"), "{shown}");
    }
}
