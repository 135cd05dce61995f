//! Object keys: always chosen by the server (prefix, optional owner tag, random id, sanitised
//! file name), and checked when a client hands one back.

use rand::RngCore;

use super::S3Settings;
use ferry_auth::Principal;

use crate::error::CompanionError;

/// Longest file-name part kept in a key; S3 allows 1024 bytes for the whole key.
const MAX_NAME: usize = 120;
/// Longest key a client may hand back.
const MAX_KEY: usize = 1024;

/// `name` reduced to characters safe in keys and URLs (letters, digits, `.`, `_`, `-`).
pub fn sanitise_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let mut out = String::with_capacity(base.len().min(MAX_NAME));
    for c in base.chars() {
        if out.len() >= MAX_NAME {
            break;
        }
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_start_matches(['.', '_']);
    if trimmed.is_empty() {
        "file".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// The part of keys that belongs to `principal` (or to everyone when auth is off): the
/// configured prefix, a tag of the subject, then the token's own prefix.
fn owner_prefix(settings: &S3Settings, principal: Option<&Principal>) -> String {
    match (&settings.auth, principal) {
        (Some(gate), Some(principal)) => format!(
            "{}{}/{}",
            settings.bucket.key_prefix,
            gate.subject_tag(principal.subject()),
            principal.prefix().unwrap_or_default()
        ),
        _ => settings.bucket.key_prefix.clone(),
    }
}

/// Lets a file called `filename` of `content_type` in under the token's type limits and quota
/// (its size is not known here: S3 receives the bytes).
pub fn admit(
    principal: Option<&Principal>,
    filename: &str,
    content_type: &str,
) -> Result<(), CompanionError> {
    if let Some(principal) = principal {
        principal.admit(&ferry_auth::Admission {
            size: None,
            mime: Some(content_type).filter(|t| !t.is_empty()),
            name: Some(filename),
        })?;
    }
    Ok(())
}

/// A fresh key for a file called `filename`.
pub fn new_key(settings: &S3Settings, principal: Option<&Principal>, filename: &str) -> String {
    let mut id = [0u8; 16];
    rand::rng().fill_bytes(&mut id);
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}{id}-{}",
        owner_prefix(settings, principal),
        sanitise_name(filename)
    )
}

/// Checks a key a client sent back: well-formed, under the prefix, and (with auth) created
/// under the same subject.
pub fn check_key(
    settings: &S3Settings,
    principal: Option<&Principal>,
    key: &str,
) -> Result<(), CompanionError> {
    if key.is_empty() {
        return Err(CompanionError::bad(
            "s3: the object key must be passed as a query parameter. For example \"?key=abc.jpg\"",
        ));
    }
    if key.len() > MAX_KEY || key.chars().any(char::is_control) || key.split('/').any(|s| s == "..")
    {
        return Err(CompanionError::bad("s3: invalid object key"));
    }
    if !key.starts_with(&owner_prefix(settings, principal)) {
        return Err(if settings.auth.is_some() {
            CompanionError::NotOwner
        } else {
            CompanionError::bad("s3: invalid object key")
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised() {
        for (input, want) in [
            ("photo.jpg", "photo.jpg"),
            ("../../etc/passwd", "passwd"),
            ("C:\\x\\y z.png", "y_z.png"),
            ("héllo wörld!.txt", "h_llo_w_rld_.txt"),
            ("...", "file"),
            ("", "file"),
            (".hidden", "hidden"),
        ] {
            assert_eq!(sanitise_name(input), want, "{input}");
        }
        assert!(sanitise_name(&"a".repeat(5000)).len() <= MAX_NAME);
    }

    #[test]
    fn keys_are_bound_to_their_subject() {
        let settings = S3Settings {
            bucket: ferry_s3::S3Bucket {
                key_prefix: "up/".into(),
                ..Default::default()
            },
            auth: Some(ferry_auth::Gate::new(b"k", |_, _| true)),
            ..S3Settings::default()
        };
        let principal = |sub: &str, prefix: Option<&str>| {
            let claims = ferry_auth::Claims {
                sub: sub.into(),
                exp: u64::MAX,
                prefix: prefix.map(str::to_owned),
                ..Default::default()
            };
            Principal::new(claims, None)
        };
        let alice = principal("alice", None);
        let bob = principal("bob", None);
        let confined = principal("alice", Some("in/"));
        let key = new_key(&settings, Some(&alice), "a b.txt");
        assert!(key.starts_with("up/") && key.ends_with("-a_b.txt"), "{key}");
        assert!(check_key(&settings, Some(&alice), &key).is_ok());
        assert!(matches!(
            check_key(&settings, Some(&bob), &key),
            Err(CompanionError::NotOwner)
        ));
        let inside = new_key(&settings, Some(&confined), "c.txt");
        assert!(inside.contains("/in/"), "{inside}");
        assert!(check_key(&settings, Some(&confined), &inside).is_ok());
        assert!(matches!(
            check_key(&settings, Some(&confined), &key),
            Err(CompanionError::NotOwner)
        ));
        assert!(matches!(
            check_key(&settings, Some(&alice), "up/../x"),
            Err(CompanionError::BadRequest(_))
        ));
    }
}
