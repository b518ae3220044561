//! A bearer token typed by the API that issued it (and, for the reporting API, bound to its
//! tenant): what a request carries. Re-exported as `token::BearerToken`; a module of its own so
//! that `request` and `token` do not depend on each other in a circle.

use crate::catalog::Api;
use std::fmt;

/// A bearer token together with the API that issued it. [`crate::request::build_request`]
/// refuses to send one API's token to the other: a reporting token authenticates reporting
/// machine routes only, an enterprise token enterprise routes only. A reporting token also
/// remembers the tenant it was obtained for, and is never sent with another tenant's
/// `X-Tenant-ID`.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken {
    api: Api,
    value: String,
    tenant_id: Option<String>,
}

impl BearerToken {
    /// A token of `api` (bindings map their typed tokens to this).
    pub fn new(api: Api, value: impl Into<String>) -> Self {
        Self {
            api,
            value: value.into(),
            tenant_id: None,
        }
    }

    /// This token bound to the tenant it was obtained for: [`crate::request::build_request`]
    /// sends that tenant when none is given and refuses another.
    pub fn for_tenant(mut self, tenant_id: impl Into<String>) -> Self {
        self.tenant_id = Some(tenant_id.into());
        self
    }

    /// The tenant the token was obtained for, when known.
    pub fn tenant_id(&self) -> Option<&str> {
        self.tenant_id.as_deref()
    }

    /// A reporting API access token (from [`crate::token::parse_token_response`], or restored from
    /// a cache) bound to the tenant it was obtained for: machine routes refuse a reporting token
    /// without its tenant.
    pub fn reports(value: impl Into<String>, tenant_id: impl Into<String>) -> Self {
        Self::new(Api::Reports, value).for_tenant(tenant_id)
    }

    /// An enterprise API token (from [`crate::token::parse_enterprise_token_response`], or restored from a
    /// cache).
    pub fn enterprise(value: impl Into<String>) -> Self {
        Self::new(Api::Enterprise, value)
    }

    /// The API that issued the token.
    pub fn api(&self) -> Api {
        self.api
    }

    /// The bearer value: send it, never log it.
    pub fn value(&self) -> &str {
        &self.value
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BearerToken")
            .field("api", &self.api)
            .field("value", &"[redacted]")
            .field("tenant_id", &self.tenant_id)
            .finish()
    }
}
