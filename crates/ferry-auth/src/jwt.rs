//! HS256 JSON Web Tokens (RFC 7519), the one algorithm Ferry signs and accepts: a header other
//! than `{"alg": "HS256"}` (`none` included) is refused before the claims are read. Expiry is the
//! caller's business, since Ferry's tokens and Companion's read it differently.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// The token is not a genuine HS256 JWT under this secret (malformed, forged or another `alg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not a genuine HS256 token")]
pub struct Forged;

/// Signs `claims` (a JSON object, written as given so callers control the claim order).
pub fn sign(secret: &[u8], claims: &str) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims));
    let sig = mac_b64(secret, signing_input.as_bytes());
    format!("{signing_input}.{sig}")
}

/// The claims of `jwt` when its signature under `secret` is right and its `alg` is HS256.
pub fn verify(secret: &[u8], jwt: &str) -> Result<Value, Forged> {
    let (signing_input, sig) = jwt.rsplit_once('.').ok_or(Forged)?;
    let (header, claims) = signing_input.split_once('.').ok_or(Forged)?;
    check_mac(secret, signing_input.as_bytes(), sig)?;
    let header = decode_json(header)?;
    if header.get("alg").and_then(Value::as_str) != Some("HS256") {
        return Err(Forged);
    }
    decode_json(claims)
}

/// Checks the base64url `sig` of `input` in constant time.
pub(crate) fn check_mac(secret: &[u8], input: &[u8], sig: &str) -> Result<(), Forged> {
    let sig = URL_SAFE_NO_PAD.decode(sig).map_err(|_| Forged)?;
    hmac(secret, input).verify_slice(&sig).map_err(|_| Forged)
}

/// The base64url HMAC-SHA256 of `input`, as tokens carry signatures.
pub(crate) fn mac_b64(secret: &[u8], input: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(mac(secret, input))
}

/// The HMAC-SHA256 of `input` under `secret`.
pub(crate) fn mac(secret: &[u8], input: &[u8]) -> [u8; 32] {
    hmac(secret, input).finalize().into_bytes().into()
}

fn hmac(secret: &[u8], input: &[u8]) -> Hmac<Sha256> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(input);
    mac
}

pub(crate) fn decode_json(part: &str) -> Result<Value, Forged> {
    let raw = URL_SAFE_NO_PAD.decode(part).map_err(|_| Forged)?;
    serde_json::from_slice(&raw).map_err(|_| Forged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_claims_verify_and_tampering_is_caught() {
        let jwt = sign(b"k", r#"{"sub":"a","exp":5}"#);
        assert_eq!(verify(b"k", &jwt).expect("genuine")["sub"], "a");
        assert_eq!(verify(b"other", &jwt), Err(Forged));
        let (head, rest) = jwt.split_once('.').expect("three parts");
        let (_, sig) = rest.split_once('.').expect("three parts");
        let other = URL_SAFE_NO_PAD.encode(r#"{"sub":"b","exp":5}"#);
        assert_eq!(verify(b"k", &format!("{head}.{other}.{sig}")), Err(Forged));
        assert_eq!(verify(b"k", "garbage"), Err(Forged));
    }

    #[test]
    fn alg_none_and_other_algorithms_are_refused_even_when_the_mac_matches() {
        for header in [
            r#"{"alg":"none"}"#,
            r#"{"alg":"HS512"}"#,
            r#"{"typ":"JWT"}"#,
        ] {
            let input = format!(
                "{}.{}",
                URL_SAFE_NO_PAD.encode(header),
                URL_SAFE_NO_PAD.encode(r#"{"sub":"a"}"#)
            );
            let sig = mac_b64(b"k", input.as_bytes());
            assert_eq!(
                verify(b"k", &format!("{input}.{sig}")),
                Err(Forged),
                "{header}"
            );
            assert_eq!(verify(b"k", &format!("{input}.")), Err(Forged), "{header}");
        }
    }
}
