//! Object keys: always chosen by the server (prefix, optional owner tag, random id, sanitised
//! file name), and checked when a client hands one back.

use rand::RngCore;

use super::S3Settings;
use super::auth::{Subject, subject_tag};
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

/// The part of keys that belongs to `subject` (or to everyone when auth is off).
fn owner_prefix(settings: &S3Settings, subject: Option<&Subject>) -> String {
    match (&settings.auth_secret, subject) {
        (Some(secret), Some(subject)) => {
            format!(
                "{}{}/",
                settings.bucket.key_prefix,
                subject_tag(secret.expose().as_bytes(), subject)
            )
        }
        _ => settings.bucket.key_prefix.clone(),
    }
}

/// A fresh key for a file called `filename`.
pub fn new_key(settings: &S3Settings, subject: Option<&Subject>, filename: &str) -> String {
    let mut id = [0u8; 16];
    rand::rng().fill_bytes(&mut id);
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}{id}-{}",
        owner_prefix(settings, subject),
        sanitise_name(filename)
    )
}

/// Checks a key a client sent back: well-formed, under the prefix, and (with auth) created
/// under the same subject.
pub fn check_key(
    settings: &S3Settings,
    subject: Option<&Subject>,
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
    if !key.starts_with(&owner_prefix(settings, subject)) {
        return Err(if settings.auth_secret.is_some() {
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
            auth_secret: Some(ferry_s3::Secret::new("k")),
            ..S3Settings::default()
        };
        let alice = Subject("alice".into());
        let bob = Subject("bob".into());
        let key = new_key(&settings, Some(&alice), "a b.txt");
        assert!(key.starts_with("up/") && key.ends_with("-a_b.txt"), "{key}");
        assert!(check_key(&settings, Some(&alice), &key).is_ok());
        assert!(matches!(
            check_key(&settings, Some(&bob), &key),
            Err(CompanionError::NotOwner)
        ));
        assert!(matches!(
            check_key(&settings, Some(&alice), "up/../x"),
            Err(CompanionError::BadRequest(_))
        ));
    }
}
