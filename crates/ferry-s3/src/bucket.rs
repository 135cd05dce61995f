//! Where a bucket is and how to sign for it: one settings type for every S3 user in Ferry,
//! built by the binary from its `--s3-*` flags.

use std::fmt;

/// A secret that never appears in `Debug` output or logs.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for signing only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How to reach one bucket.
#[derive(Clone, Debug, Default)]
pub struct S3Bucket {
    /// `http(s)://host[:port]` of the S3 API.
    pub endpoint: String,
    pub bucket: String,
    pub region: String,
    pub access_key: String,
    pub secret_key: Secret,
    /// Path-style addressing (`endpoint/bucket/key`), needed by Garage, MinIO and IP endpoints.
    pub force_path_style: bool,
    /// Prepended to every object key Ferry creates (e.g. `uploads/`).
    pub key_prefix: String,
}

impl S3Bucket {
    /// AWS's endpoint for `region`, used when no endpoint is configured.
    pub fn aws_endpoint(region: &str) -> String {
        format!("https://s3.{region}.amazonaws.com")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_never_printed() {
        let bucket = S3Bucket {
            secret_key: Secret::new("hunter2"),
            ..S3Bucket::default()
        };
        let shown = format!("{bucket:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}
