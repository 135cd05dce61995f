//! Who a request acts for, and what its token lets that subject upload.

use std::sync::Arc;

use crate::error::AuthError;
use crate::meter::Meter;
use crate::quota::Quota;
use crate::token::Claims;

/// The checked token of a request, put in its extensions by the [`Gate`](crate::Gate).
#[derive(Clone)]
pub struct Principal {
    claims: Arc<Claims>,
    quota: Option<Arc<Quota>>,
    /// The token itself, to act for the subject on the server's own routes (a link import
    /// into the server's own tus endpoint); empty when made from claims alone.
    token: Arc<str>,
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Principal")
            .field("claims", &self.claims)
            .field("token", &"[redacted]")
            .finish_non_exhaustive()
    }
}

/// What is known of a file when it asks to come in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Admission<'a> {
    /// Its size, when declared.
    pub size: Option<u64>,
    /// Its MIME type, as the client declared it.
    pub mime: Option<&'a str>,
    /// Its file name.
    pub name: Option<&'a str>,
}

impl Principal {
    /// The principal of verified `claims`, charged against `quota` when there is one.
    pub fn new(claims: Claims, quota: Option<Arc<Quota>>) -> Self {
        Self {
            claims: Arc::new(claims),
            quota,
            token: Arc::from(""),
        }
    }

    /// The same principal, remembering the `token` it was read from.
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Arc::from(token);
        self
    }

    /// The bearer token the request carried (empty when made from claims alone).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The subject (the application's user id).
    pub fn subject(&self) -> &str {
        &self.claims.sub
    }

    /// Whether something recorded as owned by `owner` belongs to this subject. Things recorded
    /// without an owner (made while access control was off) belong to nobody.
    pub fn owns(&self, owner: Option<&str>) -> bool {
        owner == Some(self.subject())
    }

    /// The largest file the token allows, if it limits size.
    pub fn max_size(&self) -> Option<u64> {
        self.claims.max_size
    }

    /// Whether this principal's uploads are held to a size: the token's `max_size` or a quota.
    pub fn limits_size(&self) -> bool {
        self.claims.max_size.is_some() || self.quota.is_some()
    }

    /// The storage prefix the token confines files to, if any.
    pub fn prefix(&self) -> Option<&str> {
        self.claims.prefix.as_deref()
    }

    /// Lets a file in, or says why not: the token's size and type limits ([`Self::check_file`]),
    /// then the subject's quota, which is charged the declared size ([`Self::charge`]).
    pub fn admit(&self, file: &Admission<'_>) -> Result<(), AuthError> {
        self.check_file(file)?;
        self.charge(file.size)
    }

    /// The token's size and type limits, without charging the quota.
    pub fn check_file(&self, file: &Admission<'_>) -> Result<(), AuthError> {
        if let (Some(limit), Some(size)) = (self.claims.max_size, file.size)
            && size > limit
        {
            return Err(AuthError::TooLarge { limit });
        }
        if let Some(types) = &self.claims.types
            && !types.iter().any(|t| type_matches(t, file.mime, file.name))
        {
            return Err(AuthError::TypeNotAllowed {
                accepted: types.join(", "),
            });
        }
        Ok(())
    }

    /// Charges `size` bytes (unknown: nothing, but refused once the quota is used up) to the
    /// subject's quota, when the server has one.
    pub fn charge(&self, size: Option<u64>) -> Result<(), AuthError> {
        match &self.quota {
            Some(quota) => quota.reserve(self.subject(), size),
            None => Ok(()),
        }
    }

    /// Charges the rest of a file whose size became known at last (`size` bytes, of which
    /// `before` were charged as they arrived): refused when the size is over the token's
    /// `max_size` or the rest does not fit the quota.
    pub fn charge_rest(&self, before: u64, size: u64) -> Result<(), AuthError> {
        if let Some(limit) = self.claims.max_size
            && size > limit
        {
            return Err(AuthError::TooLarge { limit });
        }
        match &self.quota {
            Some(quota) => quota.reserve_more(self.subject(), before, size.saturating_sub(before)),
            None => Ok(()),
        }
    }

    /// Gives back `n` bytes charged but never stored.
    pub fn refund(&self, n: u64) {
        if let Some(quota) = &self.quota {
            quota.release(self.subject(), n);
        }
    }

    /// A meter charging the bytes of a file of unknown size as they arrive, `before` of them
    /// charged already; `None` when the server has no quota.
    pub fn meter(&self, before: u64) -> Option<Meter> {
        let quota = self.quota.clone()?;
        Some(Meter::new(quota, self.subject(), before))
    }

    /// Checks that `key` lies under the token's prefix (any key when it has none).
    pub fn check_key(&self, key: &str) -> Result<(), AuthError> {
        match self.prefix() {
            Some(prefix) if !key.starts_with(prefix) || key.contains("..") => {
                Err(AuthError::OutsidePrefix {
                    prefix: prefix.to_owned(),
                })
            }
            _ => Ok(()),
        }
    }
}

/// Whether a file with `mime` and `name` matches one accepted `pattern`: `.ext` (by name),
/// `type/*` or an exact MIME type, all case-insensitive.
fn type_matches(pattern: &str, mime: Option<&str>, name: Option<&str>) -> bool {
    let pattern = pattern.trim().to_ascii_lowercase();
    if pattern.starts_with('.') {
        return name.is_some_and(|n| n.to_ascii_lowercase().ends_with(&pattern));
    }
    let Some(mime) = mime.map(|m| {
        let m = m.split(';').next().unwrap_or_default();
        m.trim().to_ascii_lowercase()
    }) else {
        return false;
    };
    match pattern.strip_suffix("/*") {
        Some(family) => mime.split('/').next() == Some(family) && mime.contains('/'),
        None => mime == pattern,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(claims: Claims) -> Principal {
        Principal::new(
            Claims {
                sub: "alice".into(),
                exp: u64::MAX,
                ..claims
            },
            None,
        )
    }

    fn file<'a>(size: u64, mime: Option<&'a str>, name: Option<&'a str>) -> Admission<'a> {
        Admission {
            size: Some(size),
            mime,
            name,
        }
    }

    #[test]
    fn size_and_type_limits_apply() {
        let p = principal(Claims {
            max_size: Some(100),
            types: Some(vec!["image/*".into(), ".PDF".into(), "text/plain".into()]),
            ..Claims::default()
        });
        assert_eq!(p.admit(&file(100, Some("image/png"), None)), Ok(()));
        assert_eq!(
            p.admit(&file(101, Some("image/png"), None)),
            Err(AuthError::TooLarge { limit: 100 })
        );
        assert_eq!(p.admit(&file(1, None, Some("a.pdf"))), Ok(()));
        assert_eq!(
            p.admit(&file(1, Some("Text/Plain; charset=utf-8"), None)),
            Ok(())
        );
        for (mime, name) in [
            (Some("video/mp4"), Some("a.mp4")),
            (Some("image"), None),
            (Some("imagex/png"), None),
            (None, None),
        ] {
            assert!(matches!(
                p.admit(&file(1, mime, name)),
                Err(AuthError::TypeNotAllowed { .. })
            ));
        }
    }

    #[test]
    fn ownership_and_prefix() {
        let p = principal(Claims {
            prefix: Some("users/alice/".into()),
            ..Claims::default()
        });
        assert!(p.owns(Some("alice")));
        assert!(!p.owns(Some("bob")));
        assert!(!p.owns(None));
        assert_eq!(p.check_key("users/alice/x"), Ok(()));
        assert!(p.check_key("users/bob/x").is_err());
        assert!(p.check_key("users/alice/../bob/x").is_err());
        assert_eq!(principal(Claims::default()).check_key("anything"), Ok(()));
    }
}
