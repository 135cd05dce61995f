//! `Upload-Checksum: <algorithm> <base64 digest>` (the checksum extension): parsing the header
//! and hashing a body as it streams past, so verifying never needs a second read.

use std::pin::Pin;
use std::task::{Context, Poll};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use futures_util::Stream;
use sha1::Digest;

use super::TusError;

/// The algorithms of `Tus-Checksum-Algorithm`, in the order advertised.
pub const ALGORITHMS: &str = "sha1,md5,sha256,crc32";

/// A supported checksum algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Sha1,
    Md5,
    Sha256,
    /// CRC-32 (IEEE), digest as 4 big-endian bytes.
    Crc32,
}

/// The digest a client promised for a PATCH body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    pub algorithm: Algorithm,
    pub digest: Vec<u8>,
}

impl Expected {
    /// Parses an `Upload-Checksum` value. An unknown algorithm or a digest that is not valid
    /// base64 of the algorithm's length is a 400.
    pub fn parse(raw: &str) -> Result<Self, TusError> {
        let (name, digest) = raw.split_once(' ').ok_or(TusError::InvalidChecksum)?;
        let algorithm = match name {
            "sha1" => Algorithm::Sha1,
            "md5" => Algorithm::Md5,
            "sha256" => Algorithm::Sha256,
            "crc32" => Algorithm::Crc32,
            _ => return Err(TusError::UnsupportedChecksum),
        };
        let digest = STANDARD
            .decode(digest)
            .map_err(|_| TusError::InvalidChecksum)?;
        let want = match algorithm {
            Algorithm::Sha1 => 20,
            Algorithm::Md5 => 16,
            Algorithm::Sha256 => 32,
            Algorithm::Crc32 => 4,
        };
        if digest.len() != want {
            return Err(TusError::InvalidChecksum);
        }
        Ok(Self { algorithm, digest })
    }
}

/// A running digest of one of the [`Algorithm`]s.
#[derive(Clone, Debug)]
pub enum Hasher {
    Sha1(sha1::Sha1),
    Md5(md5::Md5),
    Sha256(sha2::Sha256),
    Crc32(crc32fast::Hasher),
}

impl Hasher {
    pub fn new(algorithm: Algorithm) -> Self {
        match algorithm {
            Algorithm::Sha1 => Self::Sha1(sha1::Sha1::new()),
            Algorithm::Md5 => Self::Md5(md5::Md5::new()),
            Algorithm::Sha256 => Self::Sha256(sha2::Sha256::new()),
            Algorithm::Crc32 => Self::Crc32(crc32fast::Hasher::new()),
        }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Sha1(h) => h.update(bytes),
            Self::Md5(h) => h.update(bytes),
            Self::Sha256(h) => h.update(bytes),
            Self::Crc32(h) => h.update(bytes),
        }
    }

    pub fn finish(self) -> Vec<u8> {
        match self {
            Self::Sha1(h) => h.finalize().to_vec(),
            Self::Md5(h) => h.finalize().to_vec(),
            Self::Sha256(h) => h.finalize().to_vec(),
            Self::Crc32(h) => h.finalize().to_be_bytes().to_vec(),
        }
    }
}

/// Feeds every chunk passing through it to one [`Hasher`] per algorithm asked for (one for an
/// `Upload-Checksum` header; all of them when the algorithm only arrives in a trailer).
#[derive(Debug)]
pub struct HashingStream<R> {
    inner: R,
    hashers: Vec<(Algorithm, Hasher)>,
}

/// Every supported algorithm, for a checksum announced as a trailer.
pub const ALL: [Algorithm; 4] = [
    Algorithm::Sha1,
    Algorithm::Md5,
    Algorithm::Sha256,
    Algorithm::Crc32,
];

impl<R> HashingStream<R> {
    pub fn new(inner: R, algorithms: &[Algorithm]) -> Self {
        Self {
            inner,
            hashers: algorithms.iter().map(|a| (*a, Hasher::new(*a))).collect(),
        }
    }

    /// The digests of every chunk passed on so far.
    pub fn finish(self) -> Digests {
        Digests(
            self.hashers
                .into_iter()
                .map(|(a, h)| (a, h.finish()))
                .collect(),
        )
    }
}

/// Finished digests, one per algorithm hashed.
#[derive(Clone, Debug)]
pub struct Digests(Vec<(Algorithm, Vec<u8>)>);

impl Digests {
    /// Whether the bytes had the `expected` digest (false if its algorithm was not hashed).
    pub fn matches(&self, expected: &Expected) -> bool {
        self.0
            .iter()
            .any(|(a, d)| *a == expected.algorithm && *d == expected.digest)
    }
}

impl<S: Stream<Item = std::io::Result<Bytes>> + Unpin> Stream for HashingStream<S> {
    type Item = std::io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_next(cx);
        if let Poll::Ready(Some(Ok(chunk))) = &polled {
            for (_, hasher) in &mut this.hashers {
                hasher.update(chunk);
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[test]
    fn parses_each_algorithm_and_rejects_the_rest() {
        // Digests of "hello" in each algorithm.
        let ok = [
            ("sha1 qvTGHdzF6KLavt4PO0gs2a6pQ00=", Algorithm::Sha1),
            ("md5 XUFAKrxLKna5cZ2REBfFkg==", Algorithm::Md5),
            (
                "sha256 LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=",
                Algorithm::Sha256,
            ),
            ("crc32 NhCmhg==", Algorithm::Crc32),
        ];
        for (raw, algorithm) in ok {
            let expected = Expected::parse(raw).expect(raw);
            assert_eq!(expected.algorithm, algorithm);
            let mut h = Hasher::new(algorithm);
            h.update(b"hello");
            assert_eq!(h.finish(), expected.digest, "{raw}");
        }
        assert!(matches!(
            Expected::parse("sha512 AAAA"),
            Err(TusError::UnsupportedChecksum)
        ));
        for raw in [
            "sha1",
            "sha1 !!!",
            "sha1 AAAA",
            "md5  XUFAKrxLKna5cZ2REBfFkg==",
        ] {
            assert!(
                matches!(Expected::parse(raw), Err(TusError::InvalidChecksum)),
                "{raw:?}"
            );
        }
    }

    #[tokio::test]
    async fn hashing_stream_digests_what_passes() {
        let chunks = [b"he".as_slice(), b"", b"llo"].map(|c| Ok(Bytes::from_static(c)));
        let mut stream = HashingStream::new(futures_util::stream::iter(chunks), &ALL);
        let mut out = Vec::new();
        while let Some(chunk) = stream.next().await {
            out.extend_from_slice(&chunk.expect("chunk"));
        }
        assert_eq!(out, b"hello");
        let expected = Expected::parse("md5 XUFAKrxLKna5cZ2REBfFkg==").expect("valid");
        assert!(stream.finish().matches(&expected));
    }
}
