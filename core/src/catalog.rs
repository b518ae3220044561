//! Every operation of both specs as data: the single source of truth that request building,
//! error parsing, scope checks and retry classes read. No binding hard-codes a route.
//!
//! Ids are the reporting spec's operationIds; the enterprise spec gives none, so its
//! operations have stable names of the same style (`createEnterpriseWebhook`, …).

use crate::retry::RetryClass;

/// Which service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// The tenant reporting API.
    Reports,
    /// The enterprise organization API.
    Enterprise,
}

impl Api {
    /// `reports` or `enterprise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reports => "reports",
            Self::Enterprise => "enterprise",
        }
    }

    /// Parses `reports` or `enterprise`.
    pub fn parse(s: &str) -> Result<Self, crate::ArgumentError> {
        match s {
            "reports" => Ok(Self::Reports),
            "enterprise" => Ok(Self::Enterprise),
            _ => Err(crate::ArgumentError::new(
                "api",
                "must be reports or enterprise",
            )),
        }
    }
}

/// Which surface of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Surface {
    /// Reporting machine surface (`/api/platform/v1/`), bearer tokens.
    Machine,
    /// Reporting human surface (`/platform/v1/`), human sessions.
    Human,
    /// The enterprise API (`/api/v1/`).
    Enterprise,
}

impl Surface {
    /// `machine`, `human` or `enterprise`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Machine => "machine",
            Self::Human => "human",
            Self::Enterprise => "enterprise",
        }
    }
}

/// How a request authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Auth {
    /// No credential.
    None,
    /// HTTP Basic with client id and secret (reporting token exchange).
    BasicClient,
    /// `Authorization: Bearer <token>`.
    Bearer,
    /// A human session (its transport is not shown in the spec).
    Session,
    /// `X-Api-Key` and `X-Api-Secret` (enterprise token exchange).
    ApiKey,
}

impl Auth {
    /// `none`, `basic_client`, `bearer`, `session` or `api_key`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::BasicClient => "basic_client",
            Self::Bearer => "bearer",
            Self::Session => "session",
            Self::ApiKey => "api_key",
        }
    }
}

/// Step-up a human route needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepUp {
    /// None.
    None,
    /// Recent step-up (any kind).
    Recent,
    /// Recent multi-factor authentication (a recovery code does not count as sensitive step-up).
    RecentMfa,
    /// Fresh step-up that did not come from a recovery code.
    RecentNonRecovery,
}

impl StepUp {
    /// `none`, `recent`, `recent_mfa` or `recent_non_recovery`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Recent => "recent",
            Self::RecentMfa => "recent_mfa",
            Self::RecentNonRecovery => "recent_non_recovery",
        }
    }
}

/// How a query parameter is validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    /// A UUID.
    Uuid,
    /// An integer from 1 to 100 (page sizes; default 50).
    Limit,
    /// A string of 1 to 160 characters (analytics `key`).
    Key,
    /// A string of 1 to 2048 characters (analytics `cursor`).
    Cursor,
    /// Any non-empty string (enumerations whose values the spec does not show).
    Text,
    /// A positive integer (enterprise `page`, `size`).
    Positive,
    /// `YYYY-MM-DD`.
    Date,
    /// `asc` or `desc`.
    Sort,
}

/// A declared query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueryParam {
    /// Its name.
    pub name: &'static str,
    /// How it is validated.
    pub kind: QueryKind,
    /// Whether it must be present.
    pub required: bool,
}

/// The idempotency control of an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Idempotency {
    /// None declared.
    None,
    /// Declared (`idem` in the reporting spec) but the parameter's name is not shown.
    KeyUnnamed,
    /// The header `Idempotency-Key` (enterprise webhook create, update, delete).
    Header,
}

/// An operation of one of the APIs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The operationId (reporting) or stable name (enterprise).
    pub id: &'static str,
    /// The API.
    pub api: Api,
    /// The surface.
    pub surface: Surface,
    /// The HTTP method.
    pub method: &'static str,
    /// The path template, parameters in braces.
    pub path: &'static str,
    /// How it authenticates.
    pub auth: Auth,
    /// The scope the spec shows for it, if any.
    pub scope: Option<&'static str>,
    /// Its idempotency control.
    pub idempotency: Idempotency,
    /// Whether it declares a CSRF token (human mutations).
    pub csrf: bool,
    /// The step-up it needs.
    pub step_up: StepUp,
    /// Whether `X-Tenant-ID` is sent.
    pub tenant_header: bool,
    /// Whether `X-User-Id` may be sent (enterprise protected calls).
    pub user_header: bool,
    /// Whether it takes a JSON body.
    pub body: BodyRule,
    /// Success statuses.
    pub success: &'static [u16],
    /// Declared error statuses; `None` where the spec declares none (the enterprise API).
    pub errors: Option<&'static [u16]>,
    /// Declared query parameters.
    pub query: &'static [QueryParam],
    /// Whether other query parameters may be sent (the spec does not name them all).
    pub open_query: bool,
    /// The response carries `Cache-Control: no-store`.
    pub no_store: bool,
    /// How safe it is to repeat.
    pub retry_class: RetryClass,
}

/// Whether an operation takes a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyRule {
    /// No body.
    None,
    /// An optional JSON body.
    Optional,
    /// A required JSON body.
    Required,
}

impl BodyRule {
    /// `none`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }
}

use Api::{Enterprise as E, Reports as R};
use BodyRule::{None as NoBody, Optional as OptBody, Required as Body};
use Idempotency::{Header as IdemHeader, KeyUnnamed as Idem, None as NoIdem};
use QueryKind as Q;
use RetryClass as C;
use StepUp::{None as NoStep, Recent, RecentMfa, RecentNonRecovery};

const fn q(name: &'static str, kind: QueryKind, required: bool) -> QueryParam {
    QueryParam {
        name,
        kind,
        required,
    }
}

const EXPORT_LIST: &[QueryParam] = &[
    q("cursor", Q::Uuid, false),
    q("limit", Q::Limit, false),
    q("export_class", Q::Text, false),
    q("status", Q::Text, false),
    q("format", Q::Text, false),
];
const SUMMARY: &[QueryParam] = &[
    q("currency", Q::Text, true),
    q("currency_basis", Q::Text, true),
    q("import", Q::Uuid, false),
    q("period_start", Q::Text, false),
    q("period_end", Q::Text, false),
];
const FILTER_OPTIONS: &[QueryParam] = &[
    q("currency", Q::Text, true),
    q("currency_basis", Q::Text, true),
    q("basis", Q::Text, true),
    q("import", Q::Uuid, false),
    q("taxonomy", Q::Uuid, false),
    q("period_start", Q::Text, false),
    q("period_end", Q::Text, false),
];
const RATES_BREAKDOWN: &[QueryParam] = &[
    q("currency", Q::Text, true),
    q("currency_basis", Q::Text, true),
    q("basis", Q::Text, true),
    q("dimension", Q::Text, true),
    q("import", Q::Uuid, false),
    q("taxonomy", Q::Uuid, false),
    q("state", Q::Text, false),
    q("key", Q::Key, false),
    q("period_start", Q::Text, false),
    q("period_end", Q::Text, false),
    q("limit", Q::Limit, false),
    q("cursor", Q::Cursor, false),
];
// Bounds of the mapping review list's cursor and limit are not shown: checked as text.
const REVIEW_LIST: &[QueryParam] = &[q("cursor", Q::Text, false), q("limit", Q::Positive, false)];
// The search-term parameter's name is not shown, so the query stays open.
const SUBSCRIPTIONS: &[QueryParam] = &[
    q("page", Q::Positive, false),
    q("size", Q::Positive, false),
    q("daterange", Q::Date, false),
    q("sort", Q::Sort, false),
];

const ANALYTICS_ERR: &[u16] = &[400, 401, 403, 409, 422, 429, 503];
const IMPORT_CMD_ERR: &[u16] = &[400, 401, 403, 404, 409, 422, 429];
const EXPORT_CMD_ERR: &[u16] = &[400, 401, 403, 404, 409, 422, 429, 503];
const HUMAN_EXPORT_CMD_ERR: &[u16] = &[401, 403, 404, 409, 422, 429, 503];
const MFA_ERR: &[u16] = &[401, 422, 429];
const STEP_ERR: &[u16] = &[401, 403, 422, 429];
const OK: &[u16] = &[200];
const OK_CREATED: &[u16] = &[200, 201];

#[allow(clippy::too_many_arguments)]
const fn op(
    id: &'static str,
    api: Api,
    surface: Surface,
    method: &'static str,
    path: &'static str,
    auth: Auth,
    scope: Option<&'static str>,
    idempotency: Idempotency,
    csrf: bool,
    step_up: StepUp,
    body: BodyRule,
    success: &'static [u16],
    errors: Option<&'static [u16]>,
    query: &'static [QueryParam],
    no_store: bool,
    retry_class: RetryClass,
) -> Operation {
    let machine = matches!(surface, Surface::Machine);
    Operation {
        id,
        api,
        surface,
        method,
        path,
        auth,
        scope,
        idempotency,
        csrf,
        step_up,
        tenant_header: machine,
        user_header: matches!(api, Api::Enterprise) && matches!(auth, Auth::Bearer),
        body,
        success,
        errors,
        query,
        open_query: false,
        no_store,
        retry_class,
    }
}

/// Reporting human route.
#[allow(clippy::too_many_arguments)]
const fn human(
    id: &'static str,
    method: &'static str,
    path: &'static str,
    auth: Auth,
    idem: Idempotency,
    csrf: bool,
    step: StepUp,
    body: BodyRule,
    success: &'static [u16],
    errors: &'static [u16],
    query: &'static [QueryParam],
    no_store: bool,
    class: RetryClass,
) -> Operation {
    op(
        id,
        R,
        Surface::Human,
        method,
        path,
        auth,
        None,
        idem,
        csrf,
        step,
        body,
        success,
        Some(errors),
        query,
        no_store,
        class,
    )
}

/// Reporting machine route (bearer unless stated).
#[allow(clippy::too_many_arguments)]
const fn machine(
    id: &'static str,
    method: &'static str,
    path: &'static str,
    scope: Option<&'static str>,
    idem: Idempotency,
    body: BodyRule,
    success: &'static [u16],
    errors: &'static [u16],
    query: &'static [QueryParam],
    no_store: bool,
    class: RetryClass,
) -> Operation {
    op(
        id,
        R,
        Surface::Machine,
        method,
        path,
        Auth::Bearer,
        scope,
        idem,
        false,
        NoStep,
        body,
        success,
        Some(errors),
        query,
        no_store,
        class,
    )
}

/// Enterprise route (bearer unless stated).
#[allow(clippy::too_many_arguments)]
const fn ent(
    id: &'static str,
    method: &'static str,
    path: &'static str,
    scope: Option<&'static str>,
    idem: Idempotency,
    body: BodyRule,
    query: &'static [QueryParam],
    class: RetryClass,
) -> Operation {
    op(
        id,
        E,
        Surface::Enterprise,
        method,
        path,
        Auth::Bearer,
        scope,
        idem,
        false,
        NoStep,
        body,
        OK,
        None,
        query,
        false,
        class,
    )
}

const WEBHOOKS: Option<&str> = Some("webhooks:manage");

static OPERATIONS: [Operation; 58] = [
    // --- reporting, human identity and MFA -----------------------------------------------------
    human(
        "loginPlatformIdentity",
        "POST",
        "/platform/v1/identity/login",
        Auth::None,
        NoIdem,
        true,
        NoStep,
        Body,
        OK,
        &[401, 422, 429],
        &[],
        false,
        C::TokenExchange,
    ),
    human(
        "acceptNewPlatformInvitation",
        "POST",
        "/platform/v1/identity/invitations/accept",
        Auth::None,
        NoIdem,
        true,
        NoStep,
        Body,
        &[201],
        &[422, 429],
        &[],
        false,
        C::UnsafeCreate,
    ),
    human(
        "acceptExistingPlatformInvitation",
        "POST",
        "/platform/v1/identity/invitations/accept-existing",
        Auth::Session,
        NoIdem,
        true,
        Recent,
        Body,
        &[201],
        STEP_ERR,
        &[],
        false,
        C::UnsafeCreate,
    ),
    human(
        "startPlatformMfaEnrollment",
        "POST",
        "/platform/v1/identity/mfa/enroll",
        Auth::Session,
        NoIdem,
        true,
        NoStep,
        Body,
        &[201],
        MFA_ERR,
        &[],
        true,
        C::UnsafeCreate,
    ),
    human(
        "confirmPlatformMfaEnrollment",
        "POST",
        "/platform/v1/identity/mfa/confirm",
        Auth::Session,
        NoIdem,
        true,
        NoStep,
        Body,
        OK,
        MFA_ERR,
        &[],
        true,
        C::UnsafeCreate,
    ),
    human(
        "challengePlatformMfa",
        "POST",
        "/platform/v1/identity/mfa/challenge",
        Auth::Session,
        NoIdem,
        true,
        NoStep,
        Body,
        OK,
        MFA_ERR,
        &[],
        false,
        C::UnsafeCreate,
    ),
    human(
        "recoverPlatformMfa",
        "POST",
        "/platform/v1/identity/mfa/recovery",
        Auth::Session,
        NoIdem,
        true,
        NoStep,
        Body,
        OK,
        MFA_ERR,
        &[],
        false,
        C::UnsafeCreate,
    ),
    human(
        "startPlatformMfaReplacement",
        "POST",
        "/platform/v1/identity/mfa/replacement/enroll",
        Auth::Session,
        NoIdem,
        true,
        RecentNonRecovery,
        Body,
        &[201],
        STEP_ERR,
        &[],
        true,
        C::UnsafeCreate,
    ),
    human(
        "confirmPlatformMfaReplacement",
        "POST",
        "/platform/v1/identity/mfa/replacement/confirm",
        Auth::Session,
        NoIdem,
        true,
        RecentNonRecovery,
        Body,
        OK,
        STEP_ERR,
        &[],
        true,
        C::UnsafeCreate,
    ),
    human(
        "getPlatformIdentitySession",
        "GET",
        "/platform/v1/identity/session",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401],
        &[],
        false,
        C::Read,
    ),
    human(
        "listPlatformIdentitySessions",
        "GET",
        "/platform/v1/identity/sessions",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401],
        &[],
        true,
        C::Read,
    ),
    human(
        "revokePlatformIdentitySession",
        "POST",
        "/platform/v1/identity/sessions/{session}/revoke",
        Auth::Session,
        NoIdem,
        true,
        RecentNonRecovery,
        Body,
        OK,
        STEP_ERR,
        &[],
        true,
        C::SafeUpdate,
    ),
    human(
        "logoutPlatformIdentity",
        "POST",
        "/platform/v1/identity/logout",
        Auth::Session,
        NoIdem,
        true,
        NoStep,
        NoBody,
        &[204],
        &[401],
        &[],
        true,
        C::SafeUpdate,
    ),
    // --- reporting, machine token, session, imports --------------------------------------------
    op(
        "exchangePlatformClientCredential",
        R,
        Surface::Machine,
        "POST",
        "/api/platform/v1/oauth/token",
        Auth::BasicClient,
        None,
        NoIdem,
        false,
        NoStep,
        Body,
        OK,
        Some(&[400, 401, 429, 503]),
        &[],
        true,
        C::TokenExchange,
    ),
    machine(
        "getPlatformApiSession",
        "GET",
        "/api/platform/v1/api/session",
        Some("tenant:read"),
        NoIdem,
        NoBody,
        OK,
        &[401, 403, 429],
        &[],
        true,
        C::Read,
    ),
    machine(
        "createPlatformImport",
        "POST",
        "/api/platform/v1/imports",
        None,
        Idem,
        Body,
        OK_CREATED,
        &[400, 401, 403, 409, 422, 429],
        &[],
        false,
        C::IdempotentWrite,
    ),
    machine(
        "getPlatformImport",
        "GET",
        "/api/platform/v1/imports/{importRef}",
        None,
        NoIdem,
        NoBody,
        OK,
        &[400, 401, 403, 404, 429],
        &[],
        false,
        C::Read,
    ),
    machine(
        "createPlatformImportUploadSession",
        "POST",
        "/api/platform/v1/imports/{importRef}/upload-sessions",
        None,
        Idem,
        NoBody,
        OK_CREATED,
        IMPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    machine(
        "getPlatformImportMappingSuggestions",
        "GET",
        "/api/platform/v1/imports/{importRef}/mapping-suggestions",
        None,
        NoIdem,
        NoBody,
        OK,
        &[400, 401, 403, 404, 409, 429],
        &[],
        false,
        C::Read,
    ),
    machine(
        "profilePlatformImport",
        "POST",
        "/api/platform/v1/imports/{importRef}/profile",
        None,
        Idem,
        OptBody,
        &[202],
        IMPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    machine(
        "cancelPlatformImport",
        "POST",
        "/api/platform/v1/imports/{importRef}/cancel",
        None,
        Idem,
        Body,
        OK,
        IMPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    // --- reporting, published analytics --------------------------------------------------------
    machine(
        "getPublishedAnalyticsSummary",
        "GET",
        "/api/platform/v1/analytics/summary",
        None,
        NoIdem,
        NoBody,
        OK,
        ANALYTICS_ERR,
        SUMMARY,
        false,
        C::Read,
    ),
    machine(
        "listPublishedAnalyticsFilterOptions",
        "GET",
        "/api/platform/v1/analytics/filter-options",
        None,
        NoIdem,
        NoBody,
        OK,
        ANALYTICS_ERR,
        FILTER_OPTIONS,
        false,
        C::Read,
    ),
    machine(
        "getPublishedAnalyticsReadiness",
        "GET",
        "/api/platform/v1/analytics/readiness",
        None,
        NoIdem,
        NoBody,
        OK,
        &[400, 401, 403, 409, 429, 503],
        &[],
        false,
        C::Read,
    ),
    machine(
        "listPublishedObservedRates",
        "GET",
        "/api/platform/v1/analytics/rates",
        None,
        NoIdem,
        NoBody,
        OK,
        ANALYTICS_ERR,
        RATES_BREAKDOWN,
        false,
        C::Read,
    ),
    machine(
        "listPublishedAnalyticsBreakdown",
        "GET",
        "/api/platform/v1/analytics/breakdown",
        None,
        NoIdem,
        NoBody,
        OK,
        ANALYTICS_ERR,
        RATES_BREAKDOWN,
        false,
        C::Read,
    ),
    // --- reporting, machine exports ---------------------------------------------------------------
    machine(
        "listPlatformExports",
        "GET",
        "/api/platform/v1/exports",
        Some("exports:read"),
        NoIdem,
        NoBody,
        OK,
        &[400, 401, 403, 422, 429, 503],
        EXPORT_LIST,
        false,
        C::Read,
    ),
    machine(
        "createPlatformExport",
        "POST",
        "/api/platform/v1/exports",
        Some("exports:write"),
        Idem,
        Body,
        OK_CREATED,
        &[400, 401, 403, 409, 422, 429, 503],
        &[],
        false,
        C::IdempotentWrite,
    ),
    machine(
        "getPlatformExport",
        "GET",
        "/api/platform/v1/exports/{export}",
        Some("exports:write"),
        NoIdem,
        NoBody,
        OK,
        &[400, 401, 403, 404, 429, 503],
        &[],
        false,
        C::Read,
    ),
    machine(
        "downloadPlatformExport",
        "GET",
        "/api/platform/v1/exports/{export}/download",
        Some("exports:read"),
        NoIdem,
        NoBody,
        OK,
        EXPORT_CMD_ERR,
        &[],
        false,
        C::Read,
    ),
    machine(
        "cancelPlatformExport",
        "POST",
        "/api/platform/v1/exports/{export}/cancel",
        Some("exports:write"),
        Idem,
        Body,
        OK,
        EXPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    machine(
        "revokePlatformExport",
        "POST",
        "/api/platform/v1/exports/{export}/revoke",
        Some("exports:write"),
        Idem,
        Body,
        OK,
        EXPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    // --- reporting, human exports -------------------------------------------------------------------
    human(
        "listPlatformExportsAsHuman",
        "GET",
        "/platform/v1/exports",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401, 403, 422, 429, 503],
        EXPORT_LIST,
        false,
        C::Read,
    ),
    human(
        "createPlatformExportAsHuman",
        "POST",
        "/platform/v1/exports",
        Auth::Session,
        Idem,
        true,
        Recent,
        Body,
        OK_CREATED,
        &[401, 403, 409, 422, 429, 503],
        &[],
        false,
        C::IdempotentWrite,
    ),
    human(
        "getPlatformExportAsHuman",
        "GET",
        "/platform/v1/exports/{export}",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401, 403, 404, 429, 503],
        &[],
        false,
        C::Read,
    ),
    human(
        "downloadPlatformExportAsHuman",
        "GET",
        "/platform/v1/exports/{export}/download",
        Auth::Session,
        NoIdem,
        false,
        RecentNonRecovery,
        NoBody,
        OK,
        HUMAN_EXPORT_CMD_ERR,
        &[],
        false,
        C::Read,
    ),
    human(
        "cancelPlatformExportAsHuman",
        "POST",
        "/platform/v1/exports/{export}/cancel",
        Auth::Session,
        Idem,
        true,
        Recent,
        Body,
        OK,
        HUMAN_EXPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    human(
        "revokePlatformExportAsHuman",
        "POST",
        "/platform/v1/exports/{export}/revoke",
        Auth::Session,
        Idem,
        true,
        Recent,
        Body,
        OK,
        HUMAN_EXPORT_CMD_ERR,
        &[],
        false,
        C::IdempotentWrite,
    ),
    // --- reporting, human mapping review ------------------------------------------------------------
    human(
        "listPlatformMappingReviews",
        "GET",
        "/platform/v1/imports",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401, 403, 422, 429],
        REVIEW_LIST,
        false,
        C::Read,
    ),
    human(
        "getPlatformMappingReview",
        "GET",
        "/platform/v1/imports/{importRef}",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401, 403, 404, 409, 429],
        &[],
        false,
        C::Read,
    ),
    human(
        "previewPlatformMapping",
        "POST",
        "/platform/v1/imports/{importRef}/mapping/preview",
        Auth::Session,
        NoIdem,
        true,
        NoStep,
        Body,
        OK,
        &[401, 403, 404, 409, 422, 429],
        &[],
        false,
        C::SafeUpdate,
    ),
    human(
        "approvePlatformMapping",
        "POST",
        "/platform/v1/imports/{importRef}/mapping/approve",
        Auth::Session,
        Idem,
        true,
        RecentMfa,
        Body,
        OK,
        &[401, 403, 404, 409, 422, 429],
        &[],
        false,
        C::IdempotentWrite,
    ),
    human(
        "getPlatformMappingProposal",
        "GET",
        "/platform/v1/imports/{importRef}/mapping/proposal",
        Auth::Session,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        &[401, 403, 404, 429],
        &[],
        false,
        C::Read,
    ),
    human(
        "proposePlatformMapping",
        "POST",
        "/platform/v1/imports/{importRef}/mapping/proposals",
        Auth::Session,
        Idem,
        true,
        RecentMfa,
        Body,
        &[201],
        &[401, 403, 404, 409, 422, 429],
        &[],
        false,
        C::IdempotentWrite,
    ),
    // --- enterprise ---------------------------------------------------------------------------------
    op(
        "exchangeEnterpriseToken",
        E,
        Surface::Enterprise,
        "POST",
        "/api/v1/token",
        Auth::ApiKey,
        None,
        NoIdem,
        false,
        NoStep,
        NoBody,
        OK,
        None,
        &[],
        false,
        C::TokenExchange,
    ),
    ent(
        "listEnterpriseCountries",
        "GET",
        "/api/v1/countries",
        None,
        NoIdem,
        NoBody,
        &[],
        C::Read,
    ),
    ent(
        "listEnterpriseReleases",
        "GET",
        "/api/v1/releases",
        None,
        NoIdem,
        NoBody,
        &[],
        C::Read,
    ),
    ent(
        "updateEnterpriseSplit",
        "POST",
        "/api/v1/splits/{uuid}",
        None,
        NoIdem,
        Body,
        &[],
        C::SafeUpdate,
    ),
    Operation {
        open_query: true,
        ..ent(
            "listEnterpriseSubscriptions",
            "GET",
            "/api/v1/subscriptions",
            None,
            NoIdem,
            NoBody,
            SUBSCRIPTIONS,
            C::Read,
        )
    },
    ent(
        "unsuspendEnterpriseUser",
        "POST",
        "/api/v1/users/{uuid}/unsuspend",
        None,
        NoIdem,
        NoBody,
        &[],
        C::SafeUpdate,
    ),
    ent(
        "getEnterpriseCopyrightStatistics",
        "GET",
        "/api/v1/copyright/statistics",
        None,
        NoIdem,
        NoBody,
        &[],
        C::Read,
    ),
    ent(
        "createEnterpriseWebhook",
        "POST",
        "/api/v1/webhooks",
        WEBHOOKS,
        IdemHeader,
        Body,
        &[],
        C::IdempotentWrite,
    ),
    ent(
        "updateEnterpriseWebhook",
        "PATCH",
        "/api/v1/webhooks/{reference}",
        WEBHOOKS,
        IdemHeader,
        Body,
        &[],
        C::IdempotentWrite,
    ),
    ent(
        "deleteEnterpriseWebhook",
        "DELETE",
        "/api/v1/webhooks/{reference}",
        WEBHOOKS,
        IdemHeader,
        NoBody,
        &[],
        C::IdempotentWrite,
    ),
    ent(
        "testEnterpriseWebhook",
        "POST",
        "/api/v1/webhooks/{reference}/test",
        WEBHOOKS,
        NoIdem,
        NoBody,
        &[],
        C::UnsafeCreate,
    ),
    ent(
        "rotateEnterpriseWebhookSecret",
        "POST",
        "/api/v1/webhooks/{reference}/rotate-secret",
        WEBHOOKS,
        NoIdem,
        NoBody,
        &[],
        C::UnsafeCreate,
    ),
    ent(
        "listEnterpriseWebhookDeliveries",
        "GET",
        "/api/v1/webhooks/{reference}/deliveries",
        WEBHOOKS,
        NoIdem,
        NoBody,
        &[],
        C::Read,
    ),
    ent(
        "replayEnterpriseWebhookDelivery",
        "POST",
        "/api/v1/webhooks/{reference}/deliveries/{deliveryReference}/replay",
        WEBHOOKS,
        NoIdem,
        NoBody,
        &[],
        C::UnsafeCreate,
    ),
];

/// Every operation of both APIs.
pub fn operations() -> &'static [Operation] {
    &OPERATIONS
}

/// The operation with this id. Promises `invalid_argument` naming the id when unknown.
pub fn operation(id: &str) -> Result<&'static Operation, crate::ArgumentError> {
    OPERATIONS.iter().find(|o| o.id == id).ok_or_else(|| {
        crate::ArgumentError::new(
            "operation_id",
            format!(
                "unknown operation {:?}; see catalog::operations()",
                id.chars().take(80).collect::<String>()
            ),
        )
    })
}

impl Operation {
    /// Whether the spec declares `status` for this operation (success or error); `None` where
    /// the spec declares no statuses (the enterprise API).
    pub fn declares(&self, status: u16) -> Option<bool> {
        self.errors
            .map(|errors| errors.contains(&status) || self.success.contains(&status))
    }

    /// The scopes in `granted` that this operation needs and that are missing (empty when none
    /// is needed or it is granted).
    pub fn missing_scopes<S: AsRef<str>>(&self, granted: &[S]) -> Vec<&'static str> {
        self.scope
            .filter(|s| !granted.iter().any(|g| g.as_ref() == *s))
            .into_iter()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_paths_well_formed() {
        let mut ids: Vec<_> = OPERATIONS.iter().map(|o| o.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), OPERATIONS.len());
        for o in &OPERATIONS {
            let prefix = match o.surface {
                Surface::Machine => "/api/platform/v1/",
                Surface::Human => "/platform/v1/",
                Surface::Enterprise => "/api/v1/",
            };
            assert!(o.path.starts_with(prefix), "{}", o.id);
            assert_eq!(o.path.matches('{').count(), o.path.matches('}').count());
            assert!(!o.success.is_empty());
        }
        assert_eq!(
            OPERATIONS.iter().filter(|o| o.api == Api::Reports).count(),
            44
        );
        assert_eq!(
            OPERATIONS
                .iter()
                .filter(|o| o.api == Api::Enterprise)
                .count(),
            14
        );
    }
}
