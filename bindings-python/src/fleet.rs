//! The fleet for Python (`Fleet`, `FleetToken`, `FleetTokenStep` and the scripts): the processes
//! of one API client sharing one token and one rate budget through Redis. Argument conversion
//! only: the commands and what their replies mean are the core's.

use crate::args::Text;
use crate::guard;
use crate::machine::{budget_lock, lock, token_of, Session};
use pyo3::prelude::*;
use royaltykit::catalog::Api;
use royaltykit::machine::{self, FleetTokenStep};
use std::sync::Mutex;

/// Where one API client's fleet keeps its shared state in Redis: the key ``prefix`` (default
/// ``DEFAULT_FLEET_PREFIX``; give each API client its own, so two clients never share a
/// budget). ``session(budget)`` is a ``Session`` whose token and rate budget are the fleet's:
/// its calls ask ``CallStep.Reserve`` before each send and its ``RefreshToken`` is run as a
/// ``FleetToken``. Immutable.
#[pyclass(frozen, eq, module = "royaltykit")]
#[derive(PartialEq)]
pub struct Fleet(pub(crate) machine::Fleet);

#[pymethods]
impl Fleet {
    /// A fleet under ``prefix`` (None: ``DEFAULT_FLEET_PREFIX``). ``InvalidArgumentError`` for
    /// an empty prefix, one over ``MAX_FLEET_PREFIX_BYTES`` or one with spaces or control
    /// characters.
    #[new]
    #[pyo3(signature = (prefix=None))]
    fn new(prefix: Option<Text>) -> PyResult<Self> {
        guard(|| Ok(Self(machine::Fleet::new(prefix.as_deref())?)))
    }

    /// The key prefix.
    #[getter]
    fn prefix(&self) -> &str {
        self.0.prefix()
    }

    /// A new session of the fleet: ``budget``'s windows (a copy) are counted in Redis, shared by
    /// every process of the fleet, and its token is the fleet's (see ``FleetToken``).
    #[pyo3(signature = (budget=None))]
    fn session(&self, budget: Option<PyRef<'_, crate::retry::RateBudget>>) -> Session {
        Session(Mutex::new(
            self.0.session(budget_lock(&budget).map(|b| b.clone())),
        ))
    }

    fn __repr__(&self) -> String {
        format!("Fleet(prefix={:?})", self.0.prefix())
    }
}

/// One token refresh of a fleet's session, as a machine: when a call on a ``Fleet.session``
/// says ``RefreshToken``, build one and ask ``next()``; send each ``Command`` to the fleet's
/// Redis, run the exchange at ``Exchange`` (only the process holding the fleet's lock does),
/// wait at ``Wait``, until ``Done`` (the session holds the token another process published, or
/// the one this process obtained and published) or ``Failed``. One exchange per fleet; every
/// decision is the core's. Thread-safe.
#[pyclass(frozen, module = "royaltykit")]
pub struct FleetToken(Mutex<machine::FleetToken>);

impl FleetToken {
    fn input(
        &self,
        f: impl FnOnce(&mut machine::FleetToken) -> Result<(), royaltykit::ArgumentError>,
    ) -> PyResult<()> {
        guard(|| Ok(f(&mut lock(&self.0))?))
    }
}

#[pymethods]
impl FleetToken {
    /// A refresh for ``session`` (a ``Fleet.session``) of a token of ``api`` (``"enterprise"``,
    /// or ``"reports"`` with its ``tenant_id``), at ``now`` (default: the clock), by the process
    /// named by ``seed`` (default: the OS random source). ``InvalidArgumentError`` for a session
    /// that is not a fleet's, an unknown api or a ``now`` that is not finite.
    #[new]
    #[pyo3(signature = (session, api, *, tenant_id=None, seed=None, now=None))]
    fn new(
        session: PyRef<'_, Session>,
        api: Text,
        tenant_id: Option<Text>,
        seed: Option<u64>,
        now: Option<f64>,
    ) -> PyResult<Self> {
        guard(|| {
            let api = Api::parse(&api)?;
            let seed = match seed {
                Some(s) => s,
                None => royaltykit_host::random_u64()?,
            };
            let token = machine::FleetToken::new(
                &lock(&session.0),
                api,
                tenant_id.as_deref(),
                seed,
                royaltykit_host::now_or_clock_f64(now),
            )?;
            Ok(Self(Mutex::new(token)))
        })
    }

    /// The step pending (``FleetTokenStep.Command``, ``.Exchange``, ``.Wait``, ``.Done``,
    /// ``.Failed``); the same until its outcome is reported.
    fn next(&self) -> FleetTokenStep {
        lock(&self.0).next()
    }

    /// The reply of the pending ``Command`` as text (None for nil; redis-py's True for ``OK``
    /// is ``"OK"``, an integer its digits) at ``now`` (default: the clock); a token it gives is
    /// stored in ``session``. ``InvalidArgumentError`` when no command is pending.
    #[pyo3(signature = (reply, session, now=None))]
    fn replied(
        &self,
        reply: Option<Text>,
        session: PyRef<'_, Session>,
        now: Option<f64>,
    ) -> PyResult<()> {
        self.input(|t| {
            t.replied(
                reply.as_deref(),
                &mut lock(&session.0),
                royaltykit_host::now_or_clock_f64(now),
            )
        })
    }

    /// Redis could not be reached for the pending ``Command``: this process goes on without it
    /// (it exchanges on its own; a token it obtained is stored in ``session``).
    /// ``InvalidArgumentError`` when no command is pending.
    fn redis_failed(&self, session: PyRef<'_, Session>) -> PyResult<()> {
        self.input(|t| t.redis_failed(&mut lock(&session.0)))
    }

    /// The pending ``Wait`` is over: look for the token again. ``InvalidArgumentError`` when no
    /// wait is pending.
    fn waited(&self) -> PyResult<()> {
        self.input(machine::FleetToken::waited)
    }

    /// The exchange this process ran succeeded with ``token`` (a ``Token``, ``EnterpriseToken``
    /// or ``BearerToken``; due at its ``refresh_at`` unless ``refresh_at`` is given) at ``now``
    /// (default: the clock): the next step publishes it for the fleet. ``InvalidArgumentError``
    /// when no exchange is pending.
    #[pyo3(signature = (token, refresh_at=None, now=None))]
    fn exchanged(
        &self,
        token: &Bound<'_, PyAny>,
        refresh_at: Option<f64>,
        now: Option<f64>,
    ) -> PyResult<()> {
        let (token, at) = token_of(token, refresh_at)?;
        self.input(|t| t.exchanged(token, at, royaltykit_host::now_or_clock_f64(now)))
    }

    /// The exchange this process ran failed (``reason``, never a credential): the fleet's lock
    /// is released, then the session's waiting calls fail. ``InvalidArgumentError`` when no
    /// exchange is pending.
    fn exchange_failed(&self, reason: Text) -> PyResult<()> {
        self.input(|t| t.exchange_failed(&reason))
    }

    /// The command releasing the fleet's exchange lock while this refresh holds it (its
    /// exchange is running), for a host whose call was cancelled mid-exchange: take it, call
    /// ``session.abandon_exchange()`` (the process's waiting calls go on at once), then send it
    /// (best effort), so the fleet's other processes need not wait out the lease. None when this
    /// refresh holds no lock. Never log it.
    fn abandon_command(&self) -> Option<Vec<String>> {
        lock(&self.0).abandon_command()
    }

    /// Seconds since this refresh started, at ``now`` (default: the clock).
    #[pyo3(signature = (now=None))]
    fn elapsed(&self, now: Option<f64>) -> f64 {
        lock(&self.0).elapsed(royaltykit_host::now_or_clock_f64(now))
    }

    fn __repr__(&self) -> String {
        // The core's Debug names the prefix and the pending step, never a command's arguments.
        format!("{:?}", *lock(&self.0))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    crate::py_export!(m; class Fleet, FleetToken, FleetTokenStep);
    m.add("RESERVE_SCRIPT", machine::RESERVE_SCRIPT)?;
    m.add("PUBLISH_SCRIPT", machine::PUBLISH_SCRIPT)?;
    m.add("UNLOCK_SCRIPT", machine::UNLOCK_SCRIPT)?;
    m.add("DEFAULT_FLEET_PREFIX", machine::DEFAULT_FLEET_PREFIX)?;
    m.add("MAX_FLEET_PREFIX_BYTES", machine::MAX_FLEET_PREFIX_BYTES)?;
    m.add("FLEET_POLL_SECONDS", machine::FLEET_POLL_SECONDS)?;
    Ok(())
}
