//! Every operation of both specs as data: the single source of truth that request building,
//! error parsing, scope checks and retry classes read. No binding hard-codes a route.
//!
//! Ids are the reporting spec's operationIds; the enterprise spec gives none, so its
//! operations have stable names of the same style (`createEnterpriseWebhook`, …).

use crate::retry::RetryClass;

string_enum! {
    /// Which service.
    pub enum Api as "api" {
        /// The tenant reporting API.
        Reports = "reports",
        /// The enterprise organization API.
        Enterprise = "enterprise",
    }
}

string_enum! {
    /// Which surface of the API.
    pub enum Surface as "surface" {
        /// Reporting machine surface (`/api/platform/v1/`), bearer tokens.
        Machine = "machine",
        /// Reporting human surface (`/platform/v1/`), human sessions.
        Human = "human",
        /// The enterprise API (`/api/v1/`).
        Enterprise = "enterprise",
    }
}

string_enum! {
    /// How a request authenticates.
    pub enum Auth as "auth" {
        /// No credential.
        None = "none",
        /// HTTP Basic with client id and secret (reporting token exchange).
        BasicClient = "basic_client",
        /// `Authorization: Bearer <token>`.
        Bearer = "bearer",
        /// A human session (its transport is not shown in the spec).
        Session = "session",
        /// `X-Api-Key` and `X-Api-Secret` (enterprise token exchange).
        ApiKey = "api_key",
    }
}

string_enum! {
    /// Step-up a human route needs.
    pub enum StepUp as "step_up" {
        /// None.
        None = "none",
        /// Recent step-up (any kind).
        Recent = "recent",
        /// Recent multi-factor authentication (a recovery code does not count as sensitive
        /// step-up).
        RecentMfa = "recent_mfa",
        /// Fresh step-up that did not come from a recovery code.
        RecentNonRecovery = "recent_non_recovery",
    }
}

string_enum! {
    /// How a query parameter is validated.
    pub enum QueryKind as "kind" {
        /// A UUID.
        Uuid = "uuid",
        /// An integer from 1 to 100 (page sizes; default 50).
        Limit = "limit",
        /// A string of 1 to 160 characters (analytics `key`).
        Key = "key",
        /// A string of 1 to 2048 characters (analytics `cursor`).
        Cursor = "cursor",
        /// Any non-empty string (enumerations whose values the spec does not show).
        Text = "text",
        /// A positive integer (enterprise `page`, `size`).
        Positive = "positive",
        /// `YYYY-MM-DD`.
        Date = "date",
        /// `asc` or `desc`.
        Sort = "sort",
    }
}

record! {
/// A declared query parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParam {
    /// Its name.
    pub name: String,
    /// How it is validated.
    pub kind: QueryKind,
    /// Whether it must be present.
    pub required: bool,
}
}

string_enum! {
    /// The idempotency control of an operation.
    pub enum Idempotency as "idempotency" {
        /// None declared.
        None = "none",
        /// Declared (`idem` in the reporting spec) but the parameter's name is not shown.
        Key = "key",
        /// The header `Idempotency-Key` (enterprise webhook create, update, delete).
        Header = "header",
    }
}

record! {
/// An operation of one of the APIs, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The operationId (reporting) or stable name (enterprise).
    pub id: String,
    /// The API.
    pub api: Api,
    /// The surface.
    pub surface: Surface,
    /// The HTTP method.
    pub method: String,
    /// The path template, parameters in braces.
    pub path: String,
    /// How it authenticates.
    pub auth: Auth,
    /// The scope the spec shows for it, if any.
    pub scope: Option<String>,
    /// Its idempotency control.
    pub idempotency: Idempotency,
    /// Whether it declares a CSRF token (human mutations).
    pub csrf: bool,
    /// The step-up it needs.
    pub step_up: StepUp,
    /// Whether `X-Tenant-ID` is sent: every machine-surface call (reporting "Tenant context").
    pub tenant_header: bool,
    /// Whether `X-User-Id` may be sent: enterprise bearer calls ("the full list … not shown").
    pub user_header: bool,
    /// Whether it takes a JSON body.
    pub body: BodyRule,
    /// Success statuses.
    pub success: Vec<u16>,
    /// Declared error statuses; `None` where the spec declares none (the enterprise API).
    pub errors: Option<Vec<u16>>,
    /// Declared query parameters.
    pub query: Vec<QueryParam>,
    /// Whether other query parameters may be sent (the spec does not name them all).
    pub open_query: bool,
    /// The response carries `Cache-Control: no-store`.
    pub no_store: bool,
    /// How safe it is to repeat.
    pub retry_class: RetryClass,
}
}

string_enum! {
    /// Whether an operation takes a body.
    pub enum BodyRule as "body" {
        /// No body.
        None = "none",
        /// An optional JSON body.
        Optional = "optional",
        /// A required JSON body.
        Required = "required",
    }
}

use std::sync::LazyLock;
use QueryKind as Q;
use RetryClass as C;

/// A query parameter as the table spells it.
type Query = (&'static str, QueryKind, bool);

const fn q(name: &'static str, kind: QueryKind, required: bool) -> Query {
    (name, kind, required)
}

const EXPORT_LIST: &[Query] = &[
    q("cursor", Q::Uuid, false),
    q("limit", Q::Limit, false),
    q("export_class", Q::Text, false),
    q("status", Q::Text, false),
    q("format", Q::Text, false),
];
const SUMMARY: &[Query] = &[
    q("currency", Q::Text, true),
    q("currency_basis", Q::Text, true),
    q("import", Q::Uuid, false),
    q("period_start", Q::Text, false),
    q("period_end", Q::Text, false),
];
const FILTER_OPTIONS: &[Query] = &[
    q("currency", Q::Text, true),
    q("currency_basis", Q::Text, true),
    q("basis", Q::Text, true),
    q("import", Q::Uuid, false),
    q("taxonomy", Q::Uuid, false),
    q("period_start", Q::Text, false),
    q("period_end", Q::Text, false),
];
const RATES_BREAKDOWN: &[Query] = &[
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
const REVIEW_LIST: &[Query] = &[q("cursor", Q::Text, false), q("limit", Q::Positive, false)];
// The search-term parameter's name is not shown, so the query stays open.
const SUBSCRIPTIONS: &[Query] = &[
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

/// One row of the table: an operation as the specs show it. Each row names what differs from
/// its surface's defaults (`MACHINE`, `HUMAN`, `ENTERPRISE` below).
struct Row {
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
    query: &'static [Query],
    open_query: bool,
    no_store: bool,
    retry_class: RetryClass,
}

/// Reporting machine surface: bearer token, no body, 200, a read.
const MACHINE: Row = Row {
    id: "",
    api: Api::Reports,
    surface: Surface::Machine,
    method: "GET",
    path: "",
    auth: Auth::Bearer,
    scope: None,
    idempotency: Idempotency::None,
    csrf: false,
    step_up: StepUp::None,
    body: BodyRule::None,
    success: OK,
    errors: Some(&[]),
    query: &[],
    open_query: false,
    no_store: false,
    retry_class: C::Read,
};
/// Reporting human surface: a session, a CSRF token and a JSON body (mutations).
const HUMAN: Row = Row {
    surface: Surface::Human,
    auth: Auth::Session,
    csrf: true,
    body: BodyRule::Required,
    ..MACHINE
};
/// Enterprise API: bearer token, no declared statuses.
const ENTERPRISE: Row = Row {
    api: Api::Enterprise,
    surface: Surface::Enterprise,
    errors: None,
    ..MACHINE
};

#[rustfmt::skip]
const ROWS: [Row; 59] = [
    // --- reporting, human identity and MFA -----------------------------------------------------
    Row { id: "loginPlatformIdentity", method: "POST", path: "/platform/v1/identity/login", auth: Auth::None, errors: Some(MFA_ERR), retry_class: C::TokenExchange, ..HUMAN },
    Row { id: "acceptNewPlatformInvitation", method: "POST", path: "/platform/v1/identity/invitations/accept", auth: Auth::None, success: &[201], errors: Some(&[422, 429]), retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "acceptExistingPlatformInvitation", method: "POST", path: "/platform/v1/identity/invitations/accept-existing", step_up: StepUp::Recent, success: &[201], errors: Some(STEP_ERR), retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "startPlatformMfaEnrollment", method: "POST", path: "/platform/v1/identity/mfa/enroll", success: &[201], errors: Some(MFA_ERR), no_store: true, retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "confirmPlatformMfaEnrollment", method: "POST", path: "/platform/v1/identity/mfa/confirm", errors: Some(MFA_ERR), no_store: true, retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "challengePlatformMfa", method: "POST", path: "/platform/v1/identity/mfa/challenge", errors: Some(MFA_ERR), retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "recoverPlatformMfa", method: "POST", path: "/platform/v1/identity/mfa/recovery", errors: Some(MFA_ERR), retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "startPlatformMfaReplacement", method: "POST", path: "/platform/v1/identity/mfa/replacement/enroll", step_up: StepUp::RecentNonRecovery, success: &[201], errors: Some(STEP_ERR), no_store: true, retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "confirmPlatformMfaReplacement", method: "POST", path: "/platform/v1/identity/mfa/replacement/confirm", step_up: StepUp::RecentNonRecovery, errors: Some(STEP_ERR), no_store: true, retry_class: C::UnsafeCreate, ..HUMAN },
    Row { id: "getPlatformIdentitySession", method: "GET", path: "/platform/v1/identity/session", csrf: false, body: BodyRule::None, errors: Some(&[401]), ..HUMAN },
    Row { id: "listPlatformIdentitySessions", method: "GET", path: "/platform/v1/identity/sessions", csrf: false, body: BodyRule::None, errors: Some(&[401]), no_store: true, ..HUMAN },
    Row { id: "revokePlatformIdentitySession", method: "POST", path: "/platform/v1/identity/sessions/{session}/revoke", step_up: StepUp::RecentNonRecovery, errors: Some(STEP_ERR), no_store: true, retry_class: C::SafeUpdate, ..HUMAN },
    Row { id: "logoutPlatformIdentity", method: "POST", path: "/platform/v1/identity/logout", body: BodyRule::None, success: &[204], errors: Some(&[401]), no_store: true, retry_class: C::SafeUpdate, ..HUMAN },
    // --- reporting, machine token, session, imports --------------------------------------------
    Row { id: "exchangePlatformClientCredential", method: "POST", path: "/api/platform/v1/oauth/token", auth: Auth::BasicClient, body: BodyRule::Required, errors: Some(&[400, 401, 429, 503]), no_store: true, retry_class: C::TokenExchange, ..MACHINE },
    Row { id: "getPlatformApiSession", method: "GET", path: "/api/platform/v1/api/session", scope: Some("tenant:read"), errors: Some(&[401, 403, 429]), no_store: true, ..MACHINE },
    Row { id: "createPlatformImport", method: "POST", path: "/api/platform/v1/imports", idempotency: Idempotency::Key, body: BodyRule::Required, success: OK_CREATED, errors: Some(&[400, 401, 403, 409, 422, 429]), retry_class: C::IdempotentWrite, ..MACHINE },
    Row { id: "getPlatformImport", method: "GET", path: "/api/platform/v1/imports/{importRef}", errors: Some(&[400, 401, 403, 404, 429]), ..MACHINE },
    Row { id: "createPlatformImportUploadSession", method: "POST", path: "/api/platform/v1/imports/{importRef}/upload-sessions", idempotency: Idempotency::Key, success: OK_CREATED, errors: Some(IMPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..MACHINE },
    Row { id: "getPlatformImportMappingSuggestions", method: "GET", path: "/api/platform/v1/imports/{importRef}/mapping-suggestions", errors: Some(&[400, 401, 403, 404, 409, 429]), ..MACHINE },
    Row { id: "profilePlatformImport", method: "POST", path: "/api/platform/v1/imports/{importRef}/profile", idempotency: Idempotency::Key, body: BodyRule::Optional, success: &[202], errors: Some(IMPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..MACHINE },
    Row { id: "cancelPlatformImport", method: "POST", path: "/api/platform/v1/imports/{importRef}/cancel", idempotency: Idempotency::Key, body: BodyRule::Required, errors: Some(IMPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..MACHINE },
    // --- reporting, published analytics --------------------------------------------------------
    Row { id: "getPublishedAnalyticsSummary", method: "GET", path: "/api/platform/v1/analytics/summary", errors: Some(ANALYTICS_ERR), query: SUMMARY, ..MACHINE },
    Row { id: "listPublishedAnalyticsFilterOptions", method: "GET", path: "/api/platform/v1/analytics/filter-options", errors: Some(ANALYTICS_ERR), query: FILTER_OPTIONS, ..MACHINE },
    Row { id: "getPublishedAnalyticsReadiness", method: "GET", path: "/api/platform/v1/analytics/readiness", errors: Some(&[400, 401, 403, 409, 429, 503]), ..MACHINE },
    Row { id: "listPublishedObservedRates", method: "GET", path: "/api/platform/v1/analytics/rates", errors: Some(ANALYTICS_ERR), query: RATES_BREAKDOWN, ..MACHINE },
    Row { id: "listPublishedAnalyticsBreakdown", method: "GET", path: "/api/platform/v1/analytics/breakdown", errors: Some(ANALYTICS_ERR), query: RATES_BREAKDOWN, ..MACHINE },
    // --- reporting, machine exports ---------------------------------------------------------------
    Row { id: "listPlatformExports", method: "GET", path: "/api/platform/v1/exports", scope: Some("exports:read"), errors: Some(&[400, 401, 403, 422, 429, 503]), query: EXPORT_LIST, ..MACHINE },
    Row { id: "createPlatformExport", method: "POST", path: "/api/platform/v1/exports", scope: Some("exports:write"), idempotency: Idempotency::Key, body: BodyRule::Required, success: OK_CREATED, errors: Some(ANALYTICS_ERR), retry_class: C::IdempotentWrite, ..MACHINE },
    Row { id: "getPlatformExport", method: "GET", path: "/api/platform/v1/exports/{export}", scope: Some("exports:write"), errors: Some(&[400, 401, 403, 404, 429, 503]), ..MACHINE },
    Row { id: "downloadPlatformExport", method: "GET", path: "/api/platform/v1/exports/{export}/download", scope: Some("exports:read"), errors: Some(EXPORT_CMD_ERR), ..MACHINE },
    Row { id: "cancelPlatformExport", method: "POST", path: "/api/platform/v1/exports/{export}/cancel", scope: Some("exports:write"), idempotency: Idempotency::Key, body: BodyRule::Required, errors: Some(EXPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..MACHINE },
    Row { id: "revokePlatformExport", method: "POST", path: "/api/platform/v1/exports/{export}/revoke", scope: Some("exports:write"), idempotency: Idempotency::Key, body: BodyRule::Required, errors: Some(EXPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..MACHINE },
    // --- reporting, human exports -------------------------------------------------------------------
    Row { id: "listPlatformExportsAsHuman", method: "GET", path: "/platform/v1/exports", csrf: false, body: BodyRule::None, errors: Some(&[401, 403, 422, 429, 503]), query: EXPORT_LIST, ..HUMAN },
    Row { id: "createPlatformExportAsHuman", method: "POST", path: "/platform/v1/exports", idempotency: Idempotency::Key, step_up: StepUp::Recent, success: OK_CREATED, errors: Some(&[401, 403, 409, 422, 429, 503]), retry_class: C::IdempotentWrite, ..HUMAN },
    Row { id: "getPlatformExportAsHuman", method: "GET", path: "/platform/v1/exports/{export}", csrf: false, body: BodyRule::None, errors: Some(&[401, 403, 404, 429, 503]), ..HUMAN },
    Row { id: "downloadPlatformExportAsHuman", method: "GET", path: "/platform/v1/exports/{export}/download", csrf: false, step_up: StepUp::RecentNonRecovery, body: BodyRule::None, errors: Some(HUMAN_EXPORT_CMD_ERR), ..HUMAN },
    Row { id: "cancelPlatformExportAsHuman", method: "POST", path: "/platform/v1/exports/{export}/cancel", idempotency: Idempotency::Key, step_up: StepUp::Recent, errors: Some(HUMAN_EXPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..HUMAN },
    Row { id: "revokePlatformExportAsHuman", method: "POST", path: "/platform/v1/exports/{export}/revoke", idempotency: Idempotency::Key, step_up: StepUp::Recent, errors: Some(HUMAN_EXPORT_CMD_ERR), retry_class: C::IdempotentWrite, ..HUMAN },
    // --- reporting, human mapping review ------------------------------------------------------------
    Row { id: "listPlatformMappingReviews", method: "GET", path: "/platform/v1/imports", csrf: false, body: BodyRule::None, errors: Some(STEP_ERR), query: REVIEW_LIST, ..HUMAN },
    Row { id: "getPlatformMappingReview", method: "GET", path: "/platform/v1/imports/{importRef}", csrf: false, body: BodyRule::None, errors: Some(&[401, 403, 404, 409, 429]), ..HUMAN },
    Row { id: "previewPlatformMapping", method: "POST", path: "/platform/v1/imports/{importRef}/mapping/preview", errors: Some(&[401, 403, 404, 409, 422, 429]), retry_class: C::SafeUpdate, ..HUMAN },
    Row { id: "approvePlatformMapping", method: "POST", path: "/platform/v1/imports/{importRef}/mapping/approve", idempotency: Idempotency::Key, step_up: StepUp::RecentMfa, errors: Some(&[401, 403, 404, 409, 422, 429]), retry_class: C::IdempotentWrite, ..HUMAN },
    Row { id: "getPlatformMappingProposal", method: "GET", path: "/platform/v1/imports/{importRef}/mapping/proposal", csrf: false, body: BodyRule::None, errors: Some(&[401, 403, 404, 429]), ..HUMAN },
    Row { id: "proposePlatformMapping", method: "POST", path: "/platform/v1/imports/{importRef}/mapping/proposals", idempotency: Idempotency::Key, step_up: StepUp::RecentMfa, success: &[201], errors: Some(&[401, 403, 404, 409, 422, 429]), retry_class: C::IdempotentWrite, ..HUMAN },
    // --- enterprise ---------------------------------------------------------------------------------
    Row { id: "exchangeEnterpriseToken", method: "POST", path: "/api/v1/token", auth: Auth::ApiKey, retry_class: C::TokenExchange, ..ENTERPRISE },
    Row { id: "listEnterpriseCountries", method: "GET", path: "/api/v1/countries", ..ENTERPRISE },
    Row { id: "listEnterpriseReleases", method: "GET", path: "/api/v1/releases", ..ENTERPRISE },
    Row { id: "updateEnterpriseSplit", method: "POST", path: "/api/v1/splits/{uuid}", body: BodyRule::Required, retry_class: C::SafeUpdate, ..ENTERPRISE },
    Row { id: "listEnterpriseSubscriptions", method: "GET", path: "/api/v1/subscriptions", query: SUBSCRIPTIONS, open_query: true, ..ENTERPRISE },
    Row { id: "unsuspendEnterpriseUser", method: "POST", path: "/api/v1/users/{uuid}/unsuspend", retry_class: C::SafeUpdate, ..ENTERPRISE },
    Row { id: "getEnterpriseCopyrightStatistics", method: "GET", path: "/api/v1/copyright/statistics", ..ENTERPRISE },
    Row { id: "createEnterpriseWebhook", method: "POST", path: "/api/v1/webhooks", scope: Some("webhooks:manage"), idempotency: Idempotency::Header, body: BodyRule::Required, retry_class: C::IdempotentWrite, ..ENTERPRISE },
    Row { id: "updateEnterpriseWebhook", method: "PATCH", path: "/api/v1/webhooks/{reference}", scope: Some("webhooks:manage"), idempotency: Idempotency::Header, body: BodyRule::Required, retry_class: C::IdempotentWrite, ..ENTERPRISE },
    Row { id: "deleteEnterpriseWebhook", method: "DELETE", path: "/api/v1/webhooks/{reference}", scope: Some("webhooks:manage"), idempotency: Idempotency::Header, retry_class: C::IdempotentWrite, ..ENTERPRISE },
    Row { id: "testEnterpriseWebhook", method: "POST", path: "/api/v1/webhooks/{reference}/test", scope: Some("webhooks:manage"), retry_class: C::UnsafeCreate, ..ENTERPRISE },
    Row { id: "rotateEnterpriseWebhookSecret", method: "POST", path: "/api/v1/webhooks/{reference}/rotate-secret", scope: Some("webhooks:manage"), retry_class: C::SecretRotation, ..ENTERPRISE },
    Row { id: "listEnterpriseWebhookDeliveries", method: "GET", path: "/api/v1/webhooks/{reference}/deliveries", scope: Some("webhooks:manage"), ..ENTERPRISE },
    // The consumer workflow's canonical fetch ("fetch the canonical resource URL with a bearer
    // token"): `{+resource}` is an event's resource.url, checked to lie under /api/v1/.
    Row { id: "fetchEnterpriseResource", method: "GET", path: "/api/v1/{+resource}", ..ENTERPRISE },
    Row { id: "replayEnterpriseWebhookDelivery", method: "POST", path: "/api/v1/webhooks/{reference}/deliveries/{deliveryReference}/replay", scope: Some("webhooks:manage"), retry_class: C::UnsafeCreate, ..ENTERPRISE },
];

impl Row {
    fn operation(&self) -> Operation {
        Operation {
            id: self.id.to_owned(),
            api: self.api,
            surface: self.surface,
            method: self.method.to_owned(),
            path: self.path.to_owned(),
            auth: self.auth,
            scope: self.scope.map(str::to_owned),
            idempotency: self.idempotency,
            csrf: self.csrf,
            step_up: self.step_up,
            // Reporting "Tenant context": every machine-surface call names its tenant.
            tenant_header: self.surface == Surface::Machine,
            // Enterprise "Authentication": protected (bearer) calls may act as a user.
            user_header: self.api == Api::Enterprise && self.auth == Auth::Bearer,
            body: self.body,
            success: self.success.to_vec(),
            errors: self.errors.map(<[u16]>::to_vec),
            query: self
                .query
                .iter()
                .map(|&(name, kind, required)| QueryParam {
                    name: name.to_owned(),
                    kind,
                    required,
                })
                .collect(),
            open_query: self.open_query,
            no_store: self.no_store,
            retry_class: self.retry_class,
        }
    }
}

static OPERATIONS: LazyLock<Vec<Operation>> =
    LazyLock::new(|| ROWS.iter().map(Row::operation).collect());

/// Every operation of both APIs.
pub fn operations() -> &'static [Operation] {
    OPERATIONS.as_slice()
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
            .as_ref()
            .map(|errors| errors.contains(&status) || self.success.contains(&status))
    }

    /// The scopes in `granted` that this operation needs and that are missing (empty when none
    /// is needed or it is granted).
    pub fn missing_scopes<S: AsRef<str>>(&self, granted: &[S]) -> Vec<String> {
        self.scope
            .iter()
            .filter(|s| !granted.iter().any(|g| g.as_ref() == s.as_str()))
            .cloned()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_paths_well_formed() {
        let mut ids: Vec<_> = OPERATIONS.iter().map(|o| o.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), OPERATIONS.len());
        for o in OPERATIONS.iter() {
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
            15
        );
    }
}
