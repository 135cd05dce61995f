//! A transfer's record as stored in its Redis hash, and what the fleet wants the owner to do
//! with it. Checkpoint hints are kept as `h.<name>` fields beside the record's own.

use std::collections::HashMap;

/// Hint fields are stored as `h.<name>` so they never collide with the record's own fields.
pub(super) const HINT: &str = "h.";

/// What the fleet wants a transfer to do (persisted in the record; set from any instance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Desired {
    #[default]
    Run,
    Pause,
    Cancel,
}

impl Desired {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Run => "run",
            Self::Pause => "pause",
            Self::Cancel => "cancel",
        }
    }
    pub(super) fn parse(s: &str) -> Self {
        match s {
            "pause" => Self::Pause,
            "cancel" => Self::Cancel,
            _ => Self::Run,
        }
    }
}

/// A request to a transfer's owner, from any instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Pause,
    Resume,
    Cancel,
    /// The client's progress socket connected (on some instance): the owner may start.
    SocketConnected,
}

/// What the owner currently must do; watched by the running transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Directives {
    pub desired: Desired,
    pub socket_seen: bool,
}

/// A transfer's record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransferRecord {
    pub token: String,
    /// The owning instance; empty while nobody owns it (handed over or finished).
    pub owner: String,
    /// Grows with every claim: the fencing token of ownership.
    pub epoch: u64,
    /// The caller's state name (`running`, `succeeded`, ...; `succeeded`, `failed` and
    /// `canceled` are terminal and never claimed).
    pub state: String,
    pub desired: Desired,
    pub socket_seen: bool,
    /// The serialised request needed to run or resume the transfer.
    pub request: String,
    /// Free-form checkpoint hints (destination offsets, upload URLs, validators).
    pub hints: HashMap<String, String>,
    /// How many instances have run it (1 for the first).
    pub attempts: u64,
    /// Error text of a transfer failed by the registry itself (too many takeovers).
    pub last_error: Option<String>,
}

impl TransferRecord {
    pub(super) fn from_map(token: &str, mut map: HashMap<String, String>) -> Self {
        let mut take = |k: &str| map.remove(k).unwrap_or_default();
        let owner = take("owner");
        let epoch = take("epoch").parse().unwrap_or(0);
        let state = take("state");
        let desired = Desired::parse(&take("desired"));
        let socket_seen = take("socket") == "1";
        let request = take("request");
        let attempts = take("attempts").parse().unwrap_or(0);
        let last_error = map.remove("last_error");
        let hints = map
            .into_iter()
            .filter_map(|(k, v)| k.strip_prefix(HINT).map(|k| (k.to_owned(), v)))
            .collect();
        Self {
            token: token.to_owned(),
            owner,
            epoch,
            state,
            desired,
            socket_seen,
            request,
            hints,
            attempts,
            last_error,
        }
    }
}

pub(super) fn pairs_to_map(flat: Vec<String>) -> HashMap<String, String> {
    let mut map = HashMap::new();
    let mut it = flat.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        map.insert(k, v);
    }
    map
}
