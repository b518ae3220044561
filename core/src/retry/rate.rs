//! Request-rate budgets: rolling windows, the first exhausted one stops the request.

use crate::ArgumentError;
use std::collections::VecDeque;

/// One rolling window.
#[derive(Debug, Clone)]
struct Window {
    name: String,
    limit: usize,
    seconds: i64,
    /// Times of the requests counted in the window, oldest first; at most `limit`.
    log: VecDeque<i64>,
}

record! {
/// The answer of [`RateBudget::try_acquire`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateDecision {
    /// True when the request may be sent now (it has been counted).
    pub allowed: bool,
    /// When refused: the earliest time at which every exhausted window has room again.
    pub wait_until: Option<i64>,
    /// When refused: the first exhausted limit, in the order the budget lists them.
    pub limit: Option<String>,
}
}

record! {
/// One window's use at a moment, from [`RateBudget::usage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowUsage {
    /// The window's name.
    pub name: String,
    /// Requests counted in it now.
    pub count: u32,
    /// Its limit.
    pub limit: u32,
}
}

/// Default length of a window: the enterprise API's limits are per rolling minute.
pub const DEFAULT_WINDOW_SECONDS: i64 = 60;

/// How many whole seconds past its window a request keeps its place, beyond the second it was
/// counted in: one for the truncation (a request counted at second `s` may have been sent as
/// late as `s + 0.999`) and one for the path to the service (a request may reach it up to a
/// second later than one sent after it, so the service may see them closer together than they
/// were sent). A request at second `s` therefore frees its place at `s + length + 2`, and no
/// rolling window of the service's clock holds more than the limit while the spread of latency
/// between two requests stays under a second. The fleet's Redis script
/// ([`crate::machine::RESERVE_SCRIPT`]) keeps places for the same time.
pub const RATE_MARGIN_SECONDS: i64 = 2;

/// Rolling-window request budgets for one client process. Memory is bounded by the sum of the
/// limits; each call is O(1) amortised.
#[derive(Debug, Clone)]
pub struct RateBudget {
    windows: Vec<Window>,
}

/// Most windows in one budget.
pub const MAX_WINDOWS: usize = 16;
/// Largest limit of one window.
pub const MAX_LIMIT: i64 = 1_000_000;

/// The enterprise API's presets (rolling one-minute limits): name → (window name, limit).
const PRESETS: &[(&str, &[(&str, i64)])] = &[
    (
        "enterprise",
        &[
            ("api_client", 600),
            ("organization", 1_200),
            ("source_address", 180),
        ],
    ),
    (
        "enterprise_ddex",
        &[("ddex_client", 300), ("ddex_connection", 120)],
    ),
    (
        "enterprise_audio_upload",
        &[("user", 10), ("organization", 100), ("source", 20)],
    ),
    (
        "enterprise_chunk_upload",
        &[("user", 90), ("organization", 900), ("source", 180)],
    ),
];

impl RateBudget {
    /// A budget of windows `(name, limit, window_seconds)`; an absent window length is
    /// [`DEFAULT_WINDOW_SECONDS`]. Promises `invalid_argument` for no windows, more than 16, a
    /// limit outside 1 to 1,000,000, or a window outside 1 s to 1 day.
    pub fn new<S: AsRef<str>>(windows: &[(S, i64, Option<i64>)]) -> Result<Self, ArgumentError> {
        if windows.is_empty() || windows.len() > MAX_WINDOWS {
            return Err(ArgumentError::new(
                "windows",
                format!("give 1 to {MAX_WINDOWS} windows"),
            ));
        }
        let windows = windows
            .iter()
            .map(|(name, limit, seconds)| {
                let seconds = &seconds.unwrap_or(DEFAULT_WINDOW_SECONDS);
                let limit = usize::try_from(*limit)
                    .ok()
                    .filter(|l| (1..=MAX_LIMIT as usize).contains(l))
                    .ok_or_else(|| {
                        ArgumentError::new(
                            "limit",
                            format!("must be 1 to {MAX_LIMIT}, got {limit}"),
                        )
                    })?;
                if !(1..=86_400).contains(seconds) {
                    return Err(ArgumentError::new(
                        "window_seconds",
                        format!("must be 1 to 86400, got {seconds}"),
                    ));
                }
                Ok(Window {
                    name: name.as_ref().to_owned(),
                    limit,
                    seconds: *seconds,
                    log: VecDeque::new(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { windows })
    }

    /// A preset of the enterprise API's one-minute limits: `enterprise` (600 per API client,
    /// 1,200 per organization, 180 per source address), `enterprise_ddex` (300 per client, 120
    /// per connection), `enterprise_audio_upload` (10 per user, 100 per organization, 20 per
    /// source), `enterprise_chunk_upload` (90, 900, 180). The reporting API shows no request-rate
    /// limits ("Request-rate limits of this service: not shown"), so it has no preset: its calls
    /// are paced by 429 and `Retry-After` alone, or by windows the host gives
    /// [`RateBudget::new`]. Promises `invalid_argument` for another name (for `reports`, saying
    /// so).
    pub fn preset(name: &str) -> Result<Self, ArgumentError> {
        let (_, windows) = PRESETS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            if name == "reports" {
                return ArgumentError::new(
                    "preset",
                    "the reporting API shows no request-rate limits, so there is no reports preset: its calls wait on 429 and Retry-After; give your own windows if your contract names a limit",
                );
            }
            ArgumentError::new(
                "preset",
                format!(
                    "unknown preset {:?}; expected enterprise, enterprise_ddex, enterprise_audio_upload or enterprise_chunk_upload",
                    super::backoff::truncate(name)
                ),
            )
        })?;
        let windows: Vec<(&str, i64, Option<i64>)> =
            windows.iter().map(|(n, l)| (*n, *l, None)).collect();
        Self::new(&windows)
    }

    /// Counts a request at `now` (whole seconds) if every window has room and answers
    /// `allowed`; otherwise counts nothing and answers when to try again and which limit stopped
    /// it. Promises that no real window of a window's length holds more than its limit, as the
    /// service counts on arrival: a request at second `s` frees its place at
    /// `s + length + RATE_MARGIN_SECONDS` (see [`RATE_MARGIN_SECONDS`]).
    pub fn try_acquire(&mut self, now: i64) -> RateDecision {
        self.decide(now, true)
    }

    /// What [`RateBudget::try_acquire`] would answer at `now`, counting nothing: a caller that
    /// has more to settle before it sends (its token) asks first, then acquires.
    pub fn peek(&mut self, now: i64) -> RateDecision {
        self.decide(now, false)
    }

    fn decide(&mut self, now: i64, count: bool) -> RateDecision {
        let mut first_exhausted = None;
        let mut wait_until: Option<i64> = None;
        for w in &mut self.windows {
            while w
                .log
                .front()
                .is_some_and(|t| *t <= now.saturating_sub(w.seconds + RATE_MARGIN_SECONDS))
            {
                w.log.pop_front();
            }
            if w.log.len() >= w.limit {
                let frees_at = w
                    .log
                    .front()
                    .map_or(now, |t| t.saturating_add(w.seconds + RATE_MARGIN_SECONDS));
                wait_until = Some(wait_until.map_or(frees_at, |x| x.max(frees_at)));
                first_exhausted.get_or_insert_with(|| w.name.clone());
            }
        }
        if first_exhausted.is_some() {
            return RateDecision {
                allowed: false,
                wait_until,
                limit: first_exhausted,
            };
        }
        if count {
            for w in &mut self.windows {
                w.log.push_back(now);
            }
        }
        RateDecision {
            allowed: true,
            wait_until: None,
            limit: None,
        }
    }

    /// The windows: (name, limit, length in seconds), in order (a fleet counts them in Redis).
    pub(crate) fn windows(&self) -> Vec<(String, usize, i64)> {
        self.windows
            .iter()
            .map(|w| (w.name.clone(), w.limit, w.seconds))
            .collect()
    }

    /// Requests counted in each window at `now`.
    pub fn usage(&self, now: i64) -> Vec<WindowUsage> {
        self.windows
            .iter()
            .map(|w| {
                let live = w
                    .log
                    .iter()
                    .filter(|t| **t > now.saturating_sub(w.seconds + RATE_MARGIN_SECONDS))
                    .count();
                WindowUsage {
                    name: w.name.clone(),
                    count: u32::try_from(live).unwrap_or(u32::MAX),
                    limit: u32::try_from(w.limit).unwrap_or(u32::MAX),
                }
            })
            .collect()
    }
}
