//! The fleet for Kotlin (`Fleet`, `FleetToken`, the scripts): the processes of one API client
//! sharing one token and one rate budget through Redis. Conversions only: every command and what
//! its reply means is the core's (`machine::Fleet`); `RedisFleet` (RedisFleet.kt) sends them.

use crate::api::BearerToken;
use crate::machine::{lock, Session};
use crate::retry::RateBudget;
use crate::Result;
use royaltykit::catalog::Api;
use royaltykit::machine;
use std::sync::{Arc, Mutex};

/// Where one API client's fleet keeps its shared state in Redis: its key prefix. Build its
/// sessions with `session(budget)`; `RedisFleet` pairs it with a Redis client for the clients.
#[derive(uniffi::Object)]
pub struct Fleet(pub(crate) machine::Fleet);

#[uniffi::export]
impl Fleet {
    /// A fleet under `prefix` (null: `defaultFleetPrefix()`, `royaltykit:fleet:`): give each API
    /// client its own (for example your prefix and the API key's id), so two clients never share
    /// a budget. `RoyaltyKitException.InvalidArgument` for an empty prefix, one over 128 bytes or
    /// one with spaces or control characters.
    #[uniffi::constructor(default(prefix = None))]
    pub fn new(prefix: Option<String>) -> Result<Arc<Self>> {
        Ok(Arc::new(Self(machine::Fleet::new(prefix.as_deref())?)))
    }

    /// The key prefix.
    pub fn prefix(&self) -> String {
        self.0.prefix().to_owned()
    }

    /// A session whose token and rate budget are the fleet's: `budget`'s windows (null: none)
    /// are counted in Redis, so its machines ask `Reserve` before each send, and a machine told
    /// to `RefreshToken` is given the fleet's token through a `FleetToken` (one exchange for the
    /// fleet). The session starts from `budget`'s windows, not from what it counted so far.
    #[uniffi::method(default(budget = None))]
    pub fn session(&self, budget: Option<Arc<RateBudget>>) -> Arc<Session> {
        let budget = budget.map(|b| lock(&b.0).clone());
        Session::wrap(self.0.session(budget))
    }
}

/// A Redis command of a `FleetToken`, as its arguments. An object, not a list, so that printing a
/// step never prints the token the publish command carries: `describe()` shows the command's name
/// and first key only.
#[derive(uniffi::Object)]
pub struct FleetCommand(Vec<String>);

#[uniffi::export]
impl FleetCommand {
    /// The command and its arguments, to send as they are (the publish carries the token: never
    /// log them).
    pub fn args(&self) -> Vec<String> {
        self.0.clone()
    }

    /// The command's name and first key, nothing else (safe to log).
    pub fn describe(&self) -> String {
        let name = self.0.first().map_or("", String::as_str);
        // an EVAL's first key follows the script and the key count
        let key = if name.eq_ignore_ascii_case("EVAL") {
            self.0.get(3)
        } else {
            self.0.get(1)
        };
        format!("{name} {}", key.map_or("", String::as_str))
            .trim_end()
            .to_owned()
    }
}

/// What a host does next for a `FleetToken`.
#[derive(uniffi::Enum)]
pub enum FleetTokenStep {
    /// Send `command` to the fleet's Redis, then report `replied` with its reply as text (nil:
    /// null), or `redisFailed` when Redis cannot be reached.
    Command { command: Arc<FleetCommand> },
    /// This process exchanges: run the token exchange as the client does, then report
    /// `exchanged` with its token, or `exchangeFailed`.
    Exchange,
    /// Another process is exchanging: wait `seconds`, then report `waited`.
    Wait { seconds: f64 },
    /// The session holds the fleet's token: wake the calls waiting on it.
    Done,
    /// The exchange failed (the session has recorded it: its waiting calls fail): wake them.
    Failed { reason: String },
}

fn token_step(s: machine::FleetTokenStep) -> FleetTokenStep {
    match s {
        machine::FleetTokenStep::Command { command } => FleetTokenStep::Command {
            command: Arc::new(FleetCommand(command)),
        },
        machine::FleetTokenStep::Exchange {} => FleetTokenStep::Exchange,
        machine::FleetTokenStep::Wait { seconds } => FleetTokenStep::Wait { seconds },
        machine::FleetTokenStep::Done {} => FleetTokenStep::Done,
        machine::FleetTokenStep::Failed { reason } => FleetTokenStep::Failed { reason },
    }
}

/// One token refresh of a fleet's session, as a machine (the core's `machine::FleetToken`): run
/// instead of the exchange when a machine on a fleet's session says `RefreshToken`. It adopts the
/// token another process published, else takes the fleet's exchange lock and exchanges (then
/// publishes the token), else waits for the process that holds the lock. Ask `next()`, perform
/// the step, report its outcome (which returns the next step), until `Done` or `Failed`.
/// Thread-safe.
#[derive(uniffi::Object)]
pub struct FleetToken(Mutex<machine::FleetToken>);

impl FleetToken {
    fn then(
        &self,
        input: impl FnOnce(
            &mut machine::FleetToken,
        ) -> std::result::Result<(), royaltykit::ArgumentError>,
    ) -> Result<FleetTokenStep> {
        let mut t = lock(&self.0);
        input(&mut t)?;
        Ok(token_step(t.next()))
    }
}

#[uniffi::export]
impl FleetToken {
    /// A refresh for `session` (a fleet's) of a token of `api` (`tenantId`: a reporting token's
    /// tenant), by the process `seed` names (default: the OS RNG), at `now` (default: the system
    /// clock). `RoyaltyKitException.InvalidArgument` for a session that is not a fleet's.
    #[uniffi::constructor(default(tenant_id = None, seed = None, now = None))]
    pub fn new(
        session: Arc<Session>,
        api: Api,
        tenant_id: Option<String>,
        seed: Option<u64>,
        now: Option<f64>,
    ) -> Result<Arc<Self>> {
        let seed = match seed {
            Some(s) => s,
            None => royaltykit_host::random_u64()?,
        };
        let token = session.with(|s| {
            machine::FleetToken::new(
                s,
                api,
                tenant_id.as_deref(),
                seed,
                royaltykit_host::now_or_clock_f64(now),
            )
        })?;
        Ok(Arc::new(Self(Mutex::new(token))))
    }

    /// The step pending; the same until its outcome is reported.
    pub fn next(&self) -> FleetTokenStep {
        token_step(lock(&self.0).next())
    }

    /// The reply of the pending `Command` (its text; null for nil), at `now` (default: the system
    /// clock); a token adopted or published is stored in `session`. Returns the next step.
    /// `InvalidArgument` when no command is pending.
    #[uniffi::method(default(now = None))]
    pub fn replied(
        &self,
        reply: Option<String>,
        session: Arc<Session>,
        now: Option<f64>,
    ) -> Result<FleetTokenStep> {
        self.then(|t| {
            session.with(|s| t.replied(reply.as_deref(), s, royaltykit_host::now_or_clock_f64(now)))
        })
    }

    /// The fleet's Redis could not be reached for the pending `Command`: this process exchanges
    /// on its own, and its token is stored in `session`. Returns the next step.
    /// `InvalidArgument` when no command is pending.
    pub fn redis_failed(&self, session: Arc<Session>) -> Result<FleetTokenStep> {
        self.then(|t| session.with(|s| t.redis_failed(s)))
    }

    /// The pending `Wait` is over: look for the token again. Returns the next step.
    /// `InvalidArgument` when no wait is pending.
    pub fn waited(&self) -> Result<FleetTokenStep> {
        self.then(machine::FleetToken::waited)
    }

    /// The exchange this process ran gave `token`, due at `refreshAt` (Unix seconds; null: never
    /// due), at `now` (default: the system clock): it is published for the fleet. Returns the
    /// next step. `InvalidArgument` when no exchange is pending.
    #[uniffi::method(default(now = None))]
    pub fn exchanged(
        &self,
        token: Arc<BearerToken>,
        refresh_at: Option<f64>,
        now: Option<f64>,
    ) -> Result<FleetTokenStep> {
        self.then(|t| {
            t.exchanged(
                token.0.clone(),
                refresh_at,
                royaltykit_host::now_or_clock_f64(now),
            )
        })
    }

    /// The exchange this process ran failed (`reason`, never a credential): the fleet's lock is
    /// released, then the session's waiting calls fail. Returns the next step.
    /// `InvalidArgument` when no exchange is pending.
    pub fn exchange_failed(&self, reason: String) -> Result<FleetTokenStep> {
        self.then(|t| t.exchange_failed(&reason))
    }

    /// The command releasing the fleet's exchange lock while this refresh holds it (from the lock
    /// taken until its exchange ends: its one more look for a published token, then its
    /// `Exchange`; null otherwise), for a host whose call is cancelled meanwhile: take it, call
    /// `session.abandonExchange()` (the process's waiting calls go on at once), then send it to
    /// the fleet's Redis best effort (ignore its failure), so the fleet's other processes need not
    /// wait out the lock's lease (330 s).
    pub fn abandon_command(&self) -> Option<Arc<FleetCommand>> {
        lock(&self.0)
            .abandon_command()
            .map(|c| Arc::new(FleetCommand(c)))
    }

    /// Seconds since this refresh started, at `now` (default: the system clock).
    #[uniffi::method(default(now = None))]
    pub fn elapsed(&self, now: Option<f64>) -> f64 {
        lock(&self.0).elapsed(royaltykit_host::now_or_clock_f64(now))
    }

    /// A description without the token (the publish command's arguments left out).
    pub fn describe(&self) -> String {
        format!("{:?}", lock(&self.0))
    }
}

/// The reservation script (`CallStep.Reserve`'s command runs it): one request counted in every
/// window of the fleet's budget, or `wait <second> <window>`.
#[uniffi::export]
pub fn reserve_script() -> String {
    machine::RESERVE_SCRIPT.to_owned()
}

/// The script that publishes the token the lock holder obtained and releases the lock.
#[uniffi::export]
pub fn publish_script() -> String {
    machine::PUBLISH_SCRIPT.to_owned()
}

/// The script that releases the exchange lock when this process still holds it.
#[uniffi::export]
pub fn unlock_script() -> String {
    machine::UNLOCK_SCRIPT.to_owned()
}

/// The key prefix of a fleet built without one (`royaltykit:fleet:`).
#[uniffi::export]
pub fn default_fleet_prefix() -> String {
    machine::DEFAULT_FLEET_PREFIX.to_owned()
}

/// How long a process waits before looking again while another holds the exchange lock, in
/// seconds.
#[uniffi::export]
pub fn fleet_poll_seconds() -> f64 {
    machine::FLEET_POLL_SECONDS
}
