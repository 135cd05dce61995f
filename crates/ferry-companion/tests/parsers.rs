//! Property tests of what the companion reads from clients and sources: sealed tokens and
//! OAuth states (any text is refused without a panic, a changed character never opens, a token
//! opens only under its secret, for its provider, before its expiry), S3 file-name parts of
//! object keys, and file names taken from `Content-Disposition` values and URL paths (never a
//! directory, never a control character, never `.` or `..`).

use ferry_companion::names::{disposition_name, path_name};
use ferry_companion::oauth::sealed;
use ferry_companion::s3::key::sanitise_name;
use ferry_companion::token::{self, TokenError};
use proptest::prelude::*;
use serde_json::{Value, json};

const NOW: i64 = 1_700_000_000;

fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\'])
        && !name.chars().any(char::is_control)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_is_refused_without_panic(raw in "\\PC{0,200}|[0-9a-f]{32}[A-Za-z0-9_-]{0,120}") {
        prop_assert!(token::open(b"k", &raw).is_err());
        prop_assert!(token::verify(b"k", "drive", &raw, NOW).is_err());
        prop_assert!(sealed::open::<Value>(b"k", &raw).is_none());
        let _ = token::verify_jwt(b"k", &raw, NOW);
    }

    #[test]
    fn tokens_open_only_for_their_secret_provider_and_time(
        access in "[ -~]{1,60}",
        max_age in 1i64..100_000,
        other in "[a-z]{1,12}",
    ) {
        let session = json!({ "accessToken": access });
        let sealed = token::issue(b"server-secret", "drive", session.clone(), NOW, max_age);
        prop_assert_eq!(token::verify(b"server-secret", "drive", &sealed, NOW), Ok(session));
        prop_assert_eq!(
            token::verify(b"server-secret", "instagram", &sealed, NOW),
            Err(TokenError::WrongProvider)
        );
        prop_assert_eq!(
            token::verify(b"server-secret", "drive", &sealed, NOW + max_age),
            Err(TokenError::Expired)
        );
        prop_assume!(other.as_bytes() != b"server-secret");
        prop_assert_eq!(
            token::verify(other.as_bytes(), "drive", &sealed, NOW),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn a_changed_character_never_opens(
        payload in proptest::collection::vec(any::<u8>(), 0..80),
        at in any::<prop::sample::Index>(),
        with in "[0-9a-zA-Z_-]",
    ) {
        let sealed = token::seal(b"k", &payload);
        let i = at.index(sealed.len());
        let mut bytes = sealed.clone().into_bytes();
        bytes[i] = with.as_bytes()[0];
        let changed = String::from_utf8(bytes).expect("ascii");
        prop_assume!(changed != sealed);
        // The nonce is hex, read case-blind as Companion's Node code reads it: `A` for `a`
        // there is the same token, not a changed one.
        prop_assume!(!(i < 32 && changed.eq_ignore_ascii_case(&sealed)));
        prop_assert_eq!(token::open(b"k", &sealed), Ok(payload));
        prop_assert_eq!(token::open(b"k", &changed), Err(TokenError::Invalid));
    }

    #[test]
    fn sealed_states_round_trip(value in proptest::collection::btree_map("[a-z]{1,8}", "\\PC{0,20}", 0..6)) {
        let sealed = sealed::seal(b"k", &value);
        prop_assert_eq!(sealed::open(b"k", &sealed), Some(value));
        prop_assert!(sealed::open::<Value>(b"other", &sealed).is_none());
    }

    #[test]
    fn s3_name_parts_are_safe_in_keys(name in "\\PC{0,300}") {
        let part = sanitise_name(&name);
        prop_assert!(!part.is_empty() && part.len() <= 120, "{:?}", part);
        prop_assert!(!part.starts_with('.'), "{:?}", part);
        prop_assert!(
            part.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')),
            "{:?}", part
        );
    }

    #[test]
    fn disposition_names_are_plain(value in "\\PC{0,200}", name in "\\PC{0,40}") {
        for header in [
            value.clone(),
            format!("attachment; filename=\"{name}\""),
            format!("attachment; filename*=UTF-8''{name}"),
        ] {
            if let Some(found) = disposition_name(&header) {
                prop_assert!(plain_name(&found), "{:?} from {:?}", found, header);
            }
        }
    }

    #[test]
    fn url_path_names_are_plain(segment in "[^?#]{0,60}") {
        let Ok(url) = url::Url::parse(&format!("https://origin.example/dir/{segment}")) else {
            return Ok(());
        };
        if let Some(found) = path_name(&url) {
            prop_assert!(plain_name(&found), "{:?} from {}", found, url);
        }
    }
}
