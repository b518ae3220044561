//! The one public [`Error`] that every binding derives its error classes from: each
//! capability's error (and the host's [`ArgumentError`]) converted into it in one place. No
//! other module depends on this one.

use crate::api_error::ApiError;
use crate::retry::{Reconcile, TransportFailure};
use crate::ArgumentError;

string_enum! {
    /// The family of a [`RoyaltyKitError`]: what kind of thing went wrong, and so which error class a
    /// binding raises (JS and Python) or which subclass of `RoyaltyKitException` (Kotlin).
    pub enum ErrorFamily as "family" {
        /// A webhook delivery was rejected or could not be signed, or a subscription's response
        /// showed no signing secret.
        Webhook = "webhook",
        /// An argument or option is out of range: a bug or misconfiguration in the caller.
        InvalidArgument = "invalid_argument",
        /// A request could not be built from the parameters given.
        Request = "request",
        /// A success response to a token exchange broke the contract.
        TokenResponse = "token_response",
        /// A command the export's state does not allow.
        ExportState = "export_state",
        /// A download response that is not the whole artifact.
        ExportDownload = "export_download",
        /// An API error response, parsed.
        Api = "api",
        /// A list that cannot be read to its end.
        Pagination = "pagination",
        /// A call or export job stopped without an API error to show: its attempts or time ran
        /// out, or a `Retry-After` passed its budget.
        CallFailed = "call_failed",
        /// A request may have been applied: check its effect before sending it again.
        ReconcileRequired = "reconcile_required",
        /// The host could not provide something the library needs (randomness), or the
        /// library failed internally (a bug: please report it).
        Host = "host",
    }
}

/// Every error this library reports, by family. `code` is stable and means the same in every
/// language (`no_matching_signature`, `invalid_argument`, `api_error`, …); `message` says what
/// happened and what to check, and never contains a secret or token; `http_status` is the
/// status a webhook receiver should answer when this error ends its handling (400, 401, 413,
/// or 500 for anything that is the receiver's own fault or configuration).
///
/// Every domain error converts into it with `From`; bindings map its family to their error
/// classes with one table each (Kotlin: uniffi derives `RoyaltyKitException` from it).
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize)]
#[serde(
    tag = "family",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Error))]
#[cfg_attr(feature = "wasm", derive(tsify::Tsify))]
pub enum RoyaltyKitError {
    /// A webhook delivery was rejected (or could not be signed).
    #[error("{detail}")]
    Webhook {
        /// Stable code, e.g. `no_matching_signature`.
        code: String,
        /// What happened and what to check.
        #[serde(rename = "message")]
        detail: String,
        /// The status a receiver should answer.
        http_status: u16,
        /// The header at fault, when one is.
        header: Option<String>,
        /// Seconds of clock skew, for the timestamp errors.
        skew_seconds: Option<i64>,
        /// The tolerance (s) or the body limit (bytes) exceeded.
        limit: Option<u64>,
    },
    /// An argument or option is out of range (code `invalid_argument`).
    #[error("{detail}")]
    InvalidArgument {
        /// Always `invalid_argument`.
        code: String,
        /// What is wrong and what is accepted.
        #[serde(rename = "message")]
        detail: String,
        /// 500: a receiver that passes a wrong option has a bug, not a bad request.
        http_status: u16,
        /// The argument's name, as the Rust API spells it.
        argument: String,
    },
    /// A request could not be built (`missing_parameter`, `invalid_parameter`,
    /// `unknown_parameter`, `invalid_endpoint_url`, `unknown_operation`).
    #[error("{detail}")]
    Request {
        /// Stable code.
        code: String,
        /// What is wrong and what is accepted (never a token).
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
        /// The parameter at fault.
        parameter: String,
    },
    /// A success response to a token exchange broke the contract (`invalid_token_response`).
    #[error("{detail}")]
    TokenResponse {
        /// Always `invalid_token_response`.
        code: String,
        /// What is wrong (never the token).
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
    },
    /// A command the export's state does not allow (`invalid_export_transition`).
    #[error("{detail}")]
    ExportState {
        /// Always `invalid_export_transition`.
        code: String,
        /// The state, the command and why.
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
        /// The export's state, as sent.
        state: String,
        /// The command refused.
        command: String,
        /// The commands allowed in this state.
        allowed: Vec<String>,
    },
    /// A download that is not the whole artifact (`partial_content_unsupported`).
    #[error("{detail}")]
    ExportDownload {
        /// Always `partial_content_unsupported`.
        code: String,
        /// What was seen.
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
    },
    /// An API error response (code `api_error`); `error` holds it, parsed.
    #[error("{detail}")]
    Api {
        /// Always `api_error`.
        code: String,
        /// The status, message and kind.
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
        /// The parsed response.
        error: ApiError,
    },
    /// A list that cannot be read to its end (`page_unreadable`, `next_page_unknown`,
    /// `list_cursor_repeated`); the items given before it stand.
    #[error("{detail}")]
    Pagination {
        /// Stable code.
        code: String,
        /// What was seen and what to do.
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
    },
    /// A call or export job stopped without an API error to show (`call_failed`): its attempts
    /// or time budget ran out on transport failures or retryable statuses, or a `Retry-After`
    /// passed the budget. Built by [`crate::machine::CallFailure::into_error`].
    #[error("{detail}")]
    CallFailed {
        /// Always `call_failed`.
        code: String,
        /// The operation, the host, the reason, the attempts and the host's last failure
        /// ([`crate::machine::call_failed_message`]).
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
        /// The stable rule that stopped it (`attempts_exhausted`, `retry_after_exceeds_budget`, …).
        rule: String,
        /// The machine's sentence: why, and what to do.
        reason: String,
        /// The last transport failure, when there was no response.
        transport: Option<TransportFailure>,
        /// The last response's status, when there was one.
        status: Option<u16>,
        /// For a `retry_after_exceeds_budget` stop, the wait the server asked for, in seconds.
        retry_after_seconds: Option<f64>,
        /// The operation (`createPlatformExport`, …).
        operation_id: String,
        /// The requests sent.
        attempts: i64,
        /// For an export job: the stage that failed (`list`, `create`, `reconcile`, `poll`,
        /// `download`).
        stage: Option<String>,
        /// For an export job: the export's id, once the service named it.
        export_id: Option<String>,
    },
    /// A request may have been applied and must not be sent again blindly
    /// (`reconcile_required`): check its effect first, as `reconcile` says. Built by
    /// [`crate::machine::reconcile_required`].
    #[error("{detail}")]
    ReconcileRequired {
        /// Always `reconcile_required`.
        code: String,
        /// The machine's reason.
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
        /// What to check (`lookup_by_sent_data`, `rotate_again`, …).
        reconcile: Reconcile,
        /// The operation.
        operation_id: String,
        /// The machine's sentence: why, and what to do.
        reason: String,
        /// For an export job: the ids of the exports that may be its own (possibly none); empty
        /// for a single call.
        candidates: Vec<String>,
        /// `reconcile` for an export job; `None` for a single call.
        stage: Option<String>,
    },
    /// The host failed to provide randomness (`rng_unavailable`), or the library failed
    /// internally (`internal_error`, a bug).
    #[error("{detail}")]
    Host {
        /// `rng_unavailable` or `internal_error`.
        code: String,
        /// What failed.
        #[serde(rename = "message")]
        detail: String,
        /// 500.
        http_status: u16,
    },
}

/// The one public error: see [`RoyaltyKitError`].
pub type Error = RoyaltyKitError;

impl RoyaltyKitError {
    /// The family: which error class the bindings raise.
    pub fn family(&self) -> ErrorFamily {
        match self {
            Self::Webhook { .. } => ErrorFamily::Webhook,
            Self::InvalidArgument { .. } => ErrorFamily::InvalidArgument,
            Self::Request { .. } => ErrorFamily::Request,
            Self::TokenResponse { .. } => ErrorFamily::TokenResponse,
            Self::ExportState { .. } => ErrorFamily::ExportState,
            Self::ExportDownload { .. } => ErrorFamily::ExportDownload,
            Self::Api { .. } => ErrorFamily::Api,
            Self::Pagination { .. } => ErrorFamily::Pagination,
            Self::CallFailed { .. } => ErrorFamily::CallFailed,
            Self::ReconcileRequired { .. } => ErrorFamily::ReconcileRequired,
            Self::Host { .. } => ErrorFamily::Host,
        }
    }

    /// The stable code.
    pub fn code(&self) -> &str {
        self.common().0
    }

    /// The status a webhook receiver should answer when this error ends its handling.
    pub fn http_status(&self) -> u16 {
        self.common().1
    }

    /// The members every family has: the code and the status.
    fn common(&self) -> (&str, u16) {
        match self {
            Self::Webhook {
                code, http_status, ..
            }
            | Self::InvalidArgument {
                code, http_status, ..
            }
            | Self::Request {
                code, http_status, ..
            }
            | Self::TokenResponse {
                code, http_status, ..
            }
            | Self::ExportState {
                code, http_status, ..
            }
            | Self::ExportDownload {
                code, http_status, ..
            }
            | Self::Api {
                code, http_status, ..
            }
            | Self::Pagination {
                code, http_status, ..
            }
            | Self::CallFailed {
                code, http_status, ..
            }
            | Self::ReconcileRequired {
                code, http_status, ..
            }
            | Self::Host {
                code, http_status, ..
            } => (code, *http_status),
        }
    }

    /// The host's random source failed (code `rng_unavailable`). For bindings.
    pub fn rng_unavailable(what: impl std::fmt::Display) -> Self {
        Self::Host {
            code: "rng_unavailable".to_owned(),
            detail: format!("the operating system's random source failed: {what}; pass a random value or key explicitly, or fix the host's entropy source"),
            http_status: 500,
        }
    }

    /// The library failed internally (code `internal_error`): a bug, caught at the boundary
    /// so the host process keeps running. For bindings.
    pub fn internal(what: impl std::fmt::Display) -> Self {
        Self::Host {
            code: "internal_error".to_owned(),
            detail: format!("internal error in royaltykit (please report it): {what}"),
            http_status: 500,
        }
    }
}

impl From<ArgumentError> for RoyaltyKitError {
    fn from(e: ArgumentError) -> Self {
        Self::InvalidArgument {
            code: e.code().to_owned(),
            detail: e.to_string(),
            http_status: 500,
            argument: e.name.to_owned(),
        }
    }
}

impl From<crate::webhook::WebhookError> for RoyaltyKitError {
    fn from(e: crate::webhook::WebhookError) -> Self {
        use crate::webhook::WebhookError as W;
        let http_status = match &e {
            W::InvalidArgument(a) => return a.clone().into(),
            W::InvalidSecret { .. } | W::SecretNotRevealed { .. } => 500,
            W::PayloadTooLarge { .. } => 413,
            W::NoMatchingSignature { .. } => 401,
            _ => 400,
        };
        Self::Webhook {
            code: e.code().to_owned(),
            detail: e.to_string(),
            http_status,
            header: e.header().map(str::to_owned),
            skew_seconds: e.skew_seconds(),
            limit: e.limit(),
        }
    }
}

impl From<crate::request::RequestError> for RoyaltyKitError {
    fn from(e: crate::request::RequestError) -> Self {
        Self::Request {
            code: e.code().to_owned(),
            detail: e.to_string(),
            http_status: 500,
            parameter: e.parameter,
        }
    }
}

impl From<ApiError> for RoyaltyKitError {
    fn from(e: ApiError) -> Self {
        Self::Api {
            code: "api_error".to_owned(),
            detail: e.to_string(),
            http_status: 500,
            error: e,
        }
    }
}

impl From<crate::token::TokenError> for RoyaltyKitError {
    fn from(e: crate::token::TokenError) -> Self {
        match e {
            crate::token::TokenError::Api(a) => (*a).into(),
            other => Self::TokenResponse {
                code: other.code().to_owned(),
                detail: other.to_string(),
                http_status: 500,
            },
        }
    }
}

impl From<crate::export::ExportStateError> for RoyaltyKitError {
    fn from(e: crate::export::ExportStateError) -> Self {
        Self::ExportState {
            code: e.code().to_owned(),
            detail: e.to_string(),
            http_status: 500,
            state: e.state,
            command: e.command.as_str().to_owned(),
            allowed: e.allowed.iter().map(|c| c.as_str().to_owned()).collect(),
        }
    }
}

impl From<crate::export::DownloadError> for RoyaltyKitError {
    fn from(e: crate::export::DownloadError) -> Self {
        match e {
            crate::export::DownloadError::Api(a) => (*a).into(),
            other => Self::ExportDownload {
                code: other.code().to_owned(),
                detail: other.to_string(),
                http_status: 500,
            },
        }
    }
}
