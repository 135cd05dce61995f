//! Key and channel names, all under the configured prefix. Per-resource keys share a hash tag
//! (`{...}`) so the multi-key scripts stay legal on Redis Cluster; every key a script writes is
//! given an expiry there, so Redis never grows without bound.

/// Builds names under one prefix.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    prefix: String,
}

impl Keys {
    pub(crate) fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    fn tagged(&self, tag: &str, id: &str, suffix: &str) -> String {
        format!("{}{{{tag}:{id}}}:{suffix}", self.prefix)
    }

    /// Lease lock of a resource: `<owner>|<fence>`.
    pub(crate) fn lock(&self, resource: &str) -> String {
        self.tagged("lk", resource, "lock")
    }
    /// Fencing counter of a resource.
    pub(crate) fn fence(&self, resource: &str) -> String {
        self.tagged("lk", resource, "fence")
    }
    /// The newest request waiting for a resource (older waiters give up).
    pub(crate) fn want(&self, resource: &str) -> String {
        self.tagged("lk", resource, "want")
    }
    /// Hash written only by the current lock holder (e.g. the tail pointer of an S3 upload).
    pub(crate) fn fenced(&self, resource: &str) -> String {
        self.tagged("lk", resource, "fenced")
    }
    /// Channel on which a release of the resource's lock is announced.
    pub(crate) fn released(&self, resource: &str) -> String {
        self.tagged("lk", resource, "released")
    }
    /// Channel addressed to one instance (release requests).
    pub(crate) fn instance(&self, instance: &str) -> String {
        format!("{}inst:{instance}", self.prefix)
    }

    /// The transfers' stream (consumer group [`crate::transfers::GROUP`]).
    pub(crate) fn transfer_stream(&self) -> String {
        format!("{}xfer:q", self.prefix)
    }
    /// Channel telling reapers that a transfer was handed over and can be claimed now.
    pub(crate) fn transfer_wake(&self) -> String {
        format!("{}xfer:wake", self.prefix)
    }
    /// A transfer's record (hash).
    pub(crate) fn transfer(&self, token: &str) -> String {
        self.tagged("xf", token, "rec")
    }
    /// A transfer owner's liveness lease.
    pub(crate) fn transfer_lease(&self, token: &str) -> String {
        self.tagged("xf", token, "lease")
    }
    /// Control channel of a transfer (to its owner).
    pub(crate) fn transfer_control(&self, token: &str) -> String {
        self.tagged("xf", token, "ctl")
    }

    /// Channel of a replayed topic (`kind` is `ev` for progress, `auth` for OAuth hand-off).
    pub(crate) fn topic(&self, kind: &str, id: &str) -> String {
        self.tagged(kind, id, "ch")
    }
    /// Last message of a replayed topic.
    pub(crate) fn topic_last(&self, kind: &str, id: &str) -> String {
        self.tagged(kind, id, "last")
    }

    /// Server-side OAuth state, read once.
    pub(crate) fn oauth(&self, id: &str) -> String {
        format!("{}oauth:{id}", self.prefix)
    }
}
