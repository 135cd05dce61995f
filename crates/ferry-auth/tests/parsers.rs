//! Property tests of the bearer-token parser, the one door every protected route opens: any
//! string is answered without a panic, a token verifies only under its own secret and before
//! its expiry, and any change to a valid token's text is refused.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_auth::{AuthError, Claims, issue, verify};
use hmac::{Hmac, Mac};
use proptest::prelude::*;
use sha2::Sha256;

const NOW: u64 = 1_700_000_000;

fn claims() -> impl Strategy<Value = Claims> {
    (
        "\\PC{1,40}",
        NOW + 1..NOW + 10_000_000,
        proptest::option::of(any::<u64>()),
        proptest::option::of(proptest::collection::vec(
            "[a-z]{1,8}/\\*|\\.[a-z]{1,4}",
            0..4,
        )),
        proptest::option::of("[a-z0-9/_.-]{0,20}"),
    )
        .prop_map(|(sub, exp, max_size, types, prefix)| Claims {
            sub,
            exp,
            max_size,
            types,
            prefix,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_is_answered_without_panic(raw in "\\PC{0,300}|[A-Za-z0-9_.-]{0,200}") {
        let _ = verify(b"k", &raw, NOW);
    }

    #[test]
    fn issued_claims_verify_under_their_secret_only(c in claims(), other in "[a-z]{1,16}") {
        let token = issue(b"server-secret", &c);
        prop_assert_eq!(verify(b"server-secret", &token, NOW), Ok(c.clone()));
        prop_assume!(other.as_bytes() != b"server-secret");
        prop_assert_eq!(verify(other.as_bytes(), &token, NOW), Err(AuthError::Invalid));
        prop_assert_eq!(verify(b"server-secret", &token, c.exp), Err(AuthError::Expired));
    }

    #[test]
    fn any_changed_character_is_refused(c in claims(), at in any::<prop::sample::Index>(), with in "[A-Za-z0-9_.=-]") {
        let token = issue(b"k", &c);
        let i = at.index(token.len());
        let mut bytes = token.clone().into_bytes();
        bytes[i] = with.as_bytes()[0];
        let changed = String::from_utf8(bytes).expect("ascii");
        prop_assume!(changed != token);
        prop_assert!(verify(b"k", &changed, NOW).is_err(), "accepted {changed}");
    }

    #[test]
    fn headers_other_than_hs256_are_refused(alg in "none|None|NONE|HS384|HS512|RS256|ES256|\\PC{0,8}", c in claims()) {
        prop_assume!(alg != "HS256");
        let header = URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"{alg}","typ":"JWT"}}"#));
        let body = URL_SAFE_NO_PAD.encode(serde_json::to_string(&c).expect("json"));
        let input = format!("{header}.{body}");
        let mut mac = Hmac::<Sha256>::new_from_slice(b"k").expect("any key length");
        mac.update(input.as_bytes());
        let sig = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
        for token in [format!("{input}.{sig}"), format!("{input}.")] {
            prop_assert_eq!(verify(b"k", &token, NOW), Err(AuthError::Invalid), "{}", token);
        }
    }
}
