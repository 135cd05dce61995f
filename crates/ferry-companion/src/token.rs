//! Companion's sealed-token format, so tokens from a Companion sharing `--secret` keep working
//! and a mixed fleet works (`shared/reference/providers.md` §1.8):
//!
//! ```text
//! jwt   = HS256 JWT {"data": <payload>, "iat", "exp"} keyed with the secret
//! okm   = HKDF-SHA256(ikm = secret, salt = 32 zero bytes, info = nonce (16 random bytes), 44)
//! token = hex(nonce) + base64url_nopad(AES-256-CCM(key = okm[..32], iv = okm[32..], jwt) || tag16)
//! ```
//!
//! A fresh key per message (the HKDF info is the random nonce) keeps AES-CCM far from its
//! key-wear limits. The same [`seal`] / [`open`] pair (without the JWT) protects the OAuth state
//! and the login cookie.

use aes::Aes256;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ccm::Ccm;
use ccm::aead::{Aead, KeyInit};
use ccm::consts::{U12, U16};
use hkdf::Hkdf;
use rand::RngCore;
use serde_json::{Map, Value};
use sha2::Sha256;

type Cipher = Ccm<Aes256, U16, U12>;

/// Why a sealed value or an auth token was refused. Deliberately coarse: callers answer 401 or
/// 400 without saying which check failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not hex + base64url, or it does not decrypt under this secret.
    #[error("malformed or forged token")]
    Invalid,
    /// The signature is wrong or the claims are unreadable.
    #[error("bad token signature")]
    Signature,
    /// Past its `exp`.
    #[error("expired token")]
    Expired,
    /// Valid, but for another provider.
    #[error("token for another provider")]
    WrongProvider,
}

const NONCE_LEN: usize = 16;

fn cipher_for(secret: &[u8], nonce: &[u8]) -> (Cipher, [u8; 12]) {
    let hk = Hkdf::<Sha256>::new(Some(&[0u8; 32]), secret);
    let mut okm = [0u8; 44];
    // 44 bytes is far below HKDF-SHA256's 8160-byte limit.
    hk.expand(nonce, &mut okm)
        .unwrap_or_else(|_| unreachable!("44 is a valid HKDF length"));
    let mut iv = [0u8; 12];
    iv.copy_from_slice(&okm[32..]);
    (Cipher::new(okm[..32].into()), iv)
}

/// Seals `plaintext` under `secret` with a random nonce.
pub fn seal(secret: &[u8], plaintext: &[u8]) -> String {
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill_bytes(&mut nonce);
    seal_with_nonce(secret, &nonce, plaintext)
}

fn seal_with_nonce(secret: &[u8], nonce: &[u8; NONCE_LEN], plaintext: &[u8]) -> String {
    let (cipher, iv) = cipher_for(secret, nonce);
    let sealed = cipher
        .encrypt((&iv).into(), plaintext)
        .unwrap_or_else(|_| unreachable!("CCM encrypts any length below 2^32"));
    let mut out = hex(nonce);
    out.push_str(&URL_SAFE_NO_PAD.encode(sealed));
    out
}

/// Opens a value made by [`seal`] (or by Companion's `encrypt`) under `secret`.
pub fn open(secret: &[u8], token: &str) -> Result<Vec<u8>, TokenError> {
    let nonce_hex = token.get(..NONCE_LEN * 2).ok_or(TokenError::Invalid)?;
    let nonce = unhex(nonce_hex).ok_or(TokenError::Invalid)?;
    let body = URL_SAFE_NO_PAD
        .decode(&token[NONCE_LEN * 2..])
        .map_err(|_| TokenError::Invalid)?;
    let (cipher, iv) = cipher_for(secret, &nonce);
    cipher
        .decrypt((&iv).into(), body.as_slice())
        .map_err(|_| TokenError::Invalid)
}

/// An HS256 JWT of `{"data": data, "iat": iat, "exp": exp}` (what `jsonwebtoken.sign({data})`
/// writes).
pub fn sign_jwt(secret: &[u8], data: &str, iat: i64, exp: i64) -> String {
    // Claims in jsonwebtoken's order (serde_json's map would sort them).
    let data = Value::String(data.to_owned());
    ferry_auth::jwt::sign(
        secret,
        &format!(r#"{{"data":{data},"iat":{iat},"exp":{exp}}}"#),
    )
}

/// The `data` claim of an HS256 JWT signed with `secret`, unexpired at `now` (Unix seconds).
pub fn verify_jwt(secret: &[u8], jwt: &str, now: i64) -> Result<String, TokenError> {
    let claims = ferry_auth::jwt::verify(secret, jwt).map_err(|_| TokenError::Signature)?;
    let exp = claims.get("exp").and_then(Value::as_i64);
    if exp.is_some_and(|exp| now >= exp) {
        return Err(TokenError::Expired);
    }
    claims
        .get("data")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or(TokenError::Signature)
}

/// Seals `{"<provider>": session}` as an Uppy auth token valid for `max_age_secs` from `now`.
pub fn issue(secret: &[u8], provider: &str, session: Value, now: i64, max_age_secs: i64) -> String {
    let mut payload = Map::new();
    payload.insert(provider.to_owned(), session);
    let data = Value::Object(payload).to_string();
    seal(
        secret,
        sign_jwt(secret, &data, now, now + max_age_secs).as_bytes(),
    )
}

/// The provider session (`{accessToken, refreshToken?, ...}`) inside an Uppy auth token, if the
/// token is genuine, unexpired at `now` and holds a session for `provider`.
pub fn verify(secret: &[u8], provider: &str, token: &str, now: i64) -> Result<Value, TokenError> {
    let jwt = open(secret, token)?;
    let jwt = std::str::from_utf8(&jwt).map_err(|_| TokenError::Invalid)?;
    let data = verify_jwt(secret, jwt, now)?;
    let mut payload: Map<String, Value> =
        serde_json::from_str(&data).map_err(|_| TokenError::Signature)?;
    payload
        .remove(provider)
        .filter(Value::is_object)
        .ok_or(TokenError::WrongProvider)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<[u8; NONCE_LEN]> {
    let mut out = [0u8; NONCE_LEN];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // The reference's test vector (providers.md §1.8), made with Node's crypto as Companion does.
    const SECRET: &[u8] = b"companion-test-secret";
    const NONCE: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
    const JWT: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJkYXRhIjoie1wiZHJpdmVcIjp7XCJhY2Nlc3NUb2tlblwiOlwieWEyOS50ZXN0LWFjY2Vzc1wiLFwicmVmcmVzaFRva2VuXCI6XCIxLy90ZXN0LXJlZnJlc2hcIn19IiwiaWF0IjoxNzAwMDAwMDAwLCJleHAiOjE3MzQ1NjAwMDB9.79BBk7TgtEuSQBtT58t2lqEcW3EofhJWfMkvRUC8fPc";
    const TOKEN: &str = "000102030405060708090a0b0c0d0e0fTaQ4Nb4E5vOuKMR7KLyC54TBqYtRbSnL4LLzztQIaWaCsZ4rMeLhSa8516Bgju0IWK-E-YG2rFTz79QV8e5XEeFK_ULYEITiIAbMKy798CdzdBcUTC39ElJ6EFaH2qexlZTrOg7NqQeE-iVnYsUuHLtqxsWh-kyH0qSCPX6SdZ-JjjgUGK7q1C_V9OzOn8ObUlI4-vCR_uLJIl_zCOroSejVpS5W7iBuliTYDxPyCZQE2SwEw-ccwvMK5lNPeveNyY1wByAwVqtCuK8O_OcCE5qQ0oyEoUte2bKFp9HX_OPKN6Fkn4aPTB2JLhcMK4XpQpB9eEzKWo7zIM6JG8whYO13ydAoGMCoAceKYZHJS493";

    #[test]
    fn key_and_iv_match_the_vector() {
        let hk = Hkdf::<Sha256>::new(Some(&[0u8; 32]), SECRET);
        let mut okm = [0u8; 44];
        hk.expand(&NONCE, &mut okm).expect("hkdf");
        assert_eq!(
            hex(&okm[..32]),
            "8440175ea1a2f81ff1c817b5ebdeb56659cf93c6501b77e022b95d4f91445115"
        );
        assert_eq!(hex(&okm[32..]), "5f0794def3d1a2c9e5d9df1b");
    }

    #[test]
    fn companion_token_opens_and_reseals_byte_for_byte() {
        let jwt = open(SECRET, TOKEN).expect("opens");
        assert_eq!(std::str::from_utf8(&jwt), Ok(JWT));
        assert_eq!(seal_with_nonce(SECRET, &NONCE, JWT.as_bytes()), TOKEN);
    }

    #[test]
    fn companion_jwt_is_signed_the_same_way() {
        let data =
            r#"{"drive":{"accessToken":"ya29.test-access","refreshToken":"1//test-refresh"}}"#;
        assert_eq!(sign_jwt(SECRET, data, 1_700_000_000, 1_734_560_000), JWT);
    }

    #[test]
    fn companion_token_verifies_before_exp_and_is_expired_after() {
        let session = verify(SECRET, "drive", TOKEN, 1_734_559_999).expect("valid then");
        assert_eq!(session["accessToken"], "ya29.test-access");
        assert_eq!(session["refreshToken"], "1//test-refresh");
        assert_eq!(
            verify(SECRET, "drive", TOKEN, 1_734_560_000),
            Err(TokenError::Expired)
        );
        assert_eq!(
            verify(SECRET, "instagram", TOKEN, 1_734_559_999),
            Err(TokenError::WrongProvider)
        );
        assert_eq!(
            verify(b"another-secret", "drive", TOKEN, 1_734_559_999),
            Err(TokenError::Invalid)
        );
    }

    #[test]
    fn tampered_tokens_are_refused() {
        let mut bytes = TOKEN.as_bytes().to_vec();
        let last = bytes.len() - 5;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).expect("ascii");
        assert_eq!(
            verify(SECRET, "drive", &tampered, 1_734_559_999),
            Err(TokenError::Invalid)
        );
        for junk in [
            "",
            "zz",
            "00010203",
            &TOKEN[..40],
            "not hex at all, not base64 !!",
        ] {
            assert!(verify(SECRET, "drive", junk, 0).is_err(), "{junk:?}");
        }
        // A JWT signed with another key, sealed with the right one.
        let forged = sign_jwt(b"other", r#"{"drive":{"accessToken":"x"}}"#, 0, i64::MAX);
        let sealed = seal(SECRET, forged.as_bytes());
        assert_eq!(
            verify(SECRET, "drive", &sealed, 1),
            Err(TokenError::Signature)
        );
    }

    #[test]
    fn issued_tokens_round_trip() {
        let t = issue(SECRET, "drive", json!({"accessToken": "a"}), 100, 50);
        assert_eq!(
            verify(SECRET, "drive", &t, 149).expect("ok")["accessToken"],
            "a"
        );
        assert_eq!(verify(SECRET, "drive", &t, 150), Err(TokenError::Expired));
        assert_ne!(
            t,
            issue(SECRET, "drive", json!({"accessToken": "a"}), 100, 50)
        );
    }
}
