//! The seven hook types tusd defines, their wire names, which of them wait for an answer, and
//! the set of enabled ones (`--hooks-enabled-events`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::HookError;

/// A point in an upload's life at which the application is told, or asked.
///
/// The `pre-*` hooks are blocking: the upload waits for the receiver's answer, which may
/// reject it or change it. The `post-*` hooks are notifications delivered in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum HookType {
    /// Before an upload is created: may reject it, change its id, metadata or storage key.
    #[serde(rename = "pre-create")]
    PreCreate,
    /// After an upload was created.
    #[serde(rename = "post-create")]
    PostCreate,
    /// While bytes arrive, at most once per progress interval; may stop the upload.
    #[serde(rename = "post-receive")]
    PostReceive,
    /// After the last byte was stored, before the final answer is sent: may change that answer.
    #[serde(rename = "pre-finish")]
    PreFinish,
    /// After the upload finished and the answer was sent.
    #[serde(rename = "post-finish")]
    PostFinish,
    /// Before an upload is deleted by its client: may refuse the deletion.
    #[serde(rename = "pre-terminate")]
    PreTerminate,
    /// After an upload was deleted.
    #[serde(rename = "post-terminate")]
    PostTerminate,
}

impl HookType {
    /// Every hook type, in the order of an upload's life.
    pub const ALL: [HookType; 7] = [
        Self::PreCreate,
        Self::PostCreate,
        Self::PostReceive,
        Self::PreFinish,
        Self::PostFinish,
        Self::PreTerminate,
        Self::PostTerminate,
    ];

    /// The name on the wire (`"pre-create"`), also the file name of a file hook.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PreCreate => "pre-create",
            Self::PostCreate => "post-create",
            Self::PostReceive => "post-receive",
            Self::PreFinish => "pre-finish",
            Self::PostFinish => "post-finish",
            Self::PreTerminate => "pre-terminate",
            Self::PostTerminate => "post-terminate",
        }
    }

    /// Whether the upload waits for this hook's answer (tusd's table: the `pre-*` hooks).
    pub fn is_blocking(self) -> bool {
        matches!(self, Self::PreCreate | Self::PreFinish | Self::PreTerminate)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for HookType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HookType {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|hook| hook.as_str() == s)
            .ok_or_else(|| HookError::Config(format!("unknown hook event {s:?}")))
    }
}

/// The hooks that are sent; the others are skipped before any event is built.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EnabledEvents(u8);

impl EnabledEvents {
    /// tusd's default for `-hooks-enabled-events` (`cmd/tusd/cli/flags.go`): every hook but the
    /// two that slow every upload down for everyone, pre-finish and pre-terminate.
    pub fn tusd_default() -> Self {
        Self::of(&[
            HookType::PreCreate,
            HookType::PostCreate,
            HookType::PostReceive,
            HookType::PostTerminate,
            HookType::PostFinish,
        ])
    }

    /// Every hook type.
    pub fn all() -> Self {
        Self::of(&HookType::ALL)
    }

    /// No hook at all.
    pub fn none() -> Self {
        Self(0)
    }

    /// Exactly `hooks`.
    pub fn of(hooks: &[HookType]) -> Self {
        Self(hooks.iter().fold(0, |bits, hook| bits | hook.bit()))
    }

    /// Parses the flag's comma-separated list (`"pre-create, post-finish"`). As in tusd, an
    /// empty list enables every hook; an unknown name is an error, not silently ignored.
    pub fn parse(list: &str) -> Result<Self, HookError> {
        let names: Vec<&str> = list
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .collect();
        if names.is_empty() {
            return Ok(Self::all());
        }
        let hooks = names
            .into_iter()
            .map(HookType::from_str)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::of(&hooks))
    }

    /// Whether `hook` is sent.
    pub fn contains(self, hook: HookType) -> bool {
        self.0 & hook.bit() != 0
    }

    /// The enabled hooks, in the order of an upload's life.
    pub fn iter(self) -> impl Iterator<Item = HookType> {
        HookType::ALL
            .into_iter()
            .filter(move |hook| self.contains(*hook))
    }
}

impl Default for EnabledEvents {
    fn default() -> Self {
        Self::tusd_default()
    }
}

impl fmt::Debug for EnabledEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_str_and_json() {
        for hook in HookType::ALL {
            assert_eq!(hook.as_str().parse::<HookType>().ok(), Some(hook));
            let json = serde_json::to_string(&hook).expect("serialize");
            assert_eq!(json, format!("\"{}\"", hook.as_str()));
        }
        assert!("pre_create".parse::<HookType>().is_err());
    }

    #[test]
    fn only_pre_hooks_block() {
        let blocking: Vec<_> = HookType::ALL
            .into_iter()
            .filter(|h| h.is_blocking())
            .collect();
        assert_eq!(
            blocking,
            [
                HookType::PreCreate,
                HookType::PreFinish,
                HookType::PreTerminate
            ]
        );
    }

    #[test]
    fn enabled_events_parse_like_tusd() {
        let parsed = EnabledEvents::parse(" pre-create ,post-finish,").ok();
        assert_eq!(
            parsed,
            Some(EnabledEvents::of(&[
                HookType::PreCreate,
                HookType::PostFinish
            ]))
        );
        assert_eq!(EnabledEvents::parse("").ok(), Some(EnabledEvents::all()));
        let err = EnabledEvents::parse("pre-create,post-upload").err();
        assert_eq!(
            err.map(|e| e.to_string()),
            Some("invalid hook configuration: unknown hook event \"post-upload\"".to_owned())
        );
        let default = EnabledEvents::default();
        assert!(!default.contains(HookType::PreFinish));
        assert!(!default.contains(HookType::PreTerminate));
        assert_eq!(default.iter().count(), 5);
    }
}
