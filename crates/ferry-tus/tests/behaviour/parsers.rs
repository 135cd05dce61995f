//! Property tests of the header and metadata parsers: they never panic, accept exactly what
//! they render, and reject ambiguity.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ferry_tus::UploadId;
use ferry_tus::protocol::checksum::Expected;
use ferry_tus::protocol::headers::parse_decimal;
use ferry_tus::protocol::{ConcatRequest, Metadata};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn metadata_parse_never_panics(raw in "\\PC{0,300}") {
        let _ = Metadata::parse(&raw);
    }

    #[test]
    fn metadata_round_trips(pairs in proptest::collection::btree_map(
        "[a-zA-Z0-9_.-]{1,12}",
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
        0..8,
    )) {
        let header = pairs
            .iter()
            .map(|(k, v)| match v {
                Some(v) => format!("{k} {}", STANDARD.encode(v)),
                None => k.clone(),
            })
            .collect::<Vec<_>>()
            .join(",");
        let parsed = Metadata::parse(&header).expect("rendered metadata parses");
        prop_assert_eq!(&parsed.0, &pairs);
        prop_assert_eq!(Metadata::parse(&parsed.render()).expect("canonical"), parsed);
    }

    #[test]
    fn decimals_are_digits_only(raw in "[0-9+ -]{0,22}|\\PC{0,25}") {
        let plain = !raw.is_empty() && raw.len() <= 19 && raw.bytes().all(|b| b.is_ascii_digit());
        let want = if plain { raw.parse::<u64>().ok() } else { None };
        prop_assert_eq!(parse_decimal(&raw), want);
    }

    #[test]
    fn decimals_round_trip(n in any::<u64>()) {
        let text = n.to_string();
        prop_assert_eq!(parse_decimal(&text), (text.len() <= 19).then_some(n));
    }

    #[test]
    fn checksum_and_concat_never_panic(raw in "\\PC{0,200}") {
        let _ = Expected::parse(&raw);
        let _ = ConcatRequest::parse(&raw, "/files/");
    }

    #[test]
    fn ids_are_exactly_the_safe_alphabet(raw in "[A-Za-z0-9_-]{0,140}|\\PC{0,40}|[a-f0-9%./]{1,40}") {
        let safe = (1..=128).contains(&raw.len())
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        let parsed = UploadId::parse(&raw);
        prop_assert_eq!(parsed.is_some(), safe, "{:?}", raw);
        if let Some(id) = parsed {
            prop_assert_eq!(id.as_str(), raw.as_str());
        }
    }

    #[test]
    fn generated_ids_parse_back(_n in 0..64u8) {
        let id = UploadId::generate();
        prop_assert_eq!(UploadId::parse(id.as_str()), Some(id));
    }
}
