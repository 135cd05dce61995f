//! Where a bucket is and how to sign for it: one settings type for every S3 user in Ferry,
//! built by the binary from its `--s3-*` flags.

use ferry_auth::Secret;

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
