//! The `ffmpeg` parameter of `/video/encode` and `/audio/encode`: an object of ffmpeg options
//! merged over the preset, checked against an allowed set of keys, each with its own value
//! check, so a step can tune codecs and rates but can never add a filter graph (`vf`, `af`,
//! `filter_complex`: filters such as `movie=` open files), an input, an output, a protocol or a
//! raw argument string. `null` removes a preset's option, as Transloadit documents. Also the
//! `ffmpeg_stack` version string.

use serde_json::Value;

use super::EngineError;

/// A validated, ordered list of `-key value` options (value `None`: a flag such as `-an`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FfmpegOptions(pub(crate) Vec<(&'static str, Option<Value>)>);

#[derive(Clone, Copy)]
enum Check {
    Codec(&'static [&'static str]),
    Bitrate,
    Int(i64, i64),
    Num(f64, f64),
    OneOf(&'static [&'static str]),
    Rate,
    Time,
    Level,
    Flag,
}

const VIDEO_CODECS: &[&str] = &[
    "libx264",
    "libx265",
    "libvpx",
    "libvpx-vp9",
    "libaom-av1",
    "mjpeg",
    "png",
    "gif",
    "copy",
];
const AUDIO_CODECS: &[&str] = &[
    "aac",
    "libopus",
    "libmp3lame",
    "libvorbis",
    "flac",
    "pcm_s16le",
    "copy",
];

/// Allowed keys (canonical name, aliases) and their value checks.
const ALLOWED: &[(&str, &[&str], Check)] = &[
    ("c:v", &["codec:v", "vcodec"], Check::Codec(VIDEO_CODECS)),
    ("c:a", &["codec:a", "acodec"], Check::Codec(AUDIO_CODECS)),
    ("b:v", &["vb"], Check::Bitrate),
    ("b:a", &["ab"], Check::Bitrate),
    ("maxrate", &[], Check::Bitrate),
    ("minrate", &[], Check::Bitrate),
    ("bufsize", &[], Check::Bitrate),
    ("crf", &[], Check::Num(0.0, 63.0)),
    ("qp", &[], Check::Int(0, 63)),
    ("q:v", &["qscale:v"], Check::Num(0.0, 51.0)),
    ("q:a", &["qscale:a"], Check::Num(0.0, 10.0)),
    (
        "preset",
        &[],
        Check::OneOf(&[
            "ultrafast",
            "superfast",
            "veryfast",
            "faster",
            "fast",
            "medium",
            "slow",
            "slower",
            "veryslow",
        ]),
    ),
    (
        "tune",
        &[],
        Check::OneOf(&[
            "film",
            "animation",
            "grain",
            "stillimage",
            "fastdecode",
            "zerolatency",
        ]),
    ),
    (
        "profile:v",
        &["vprofile"],
        Check::OneOf(&["baseline", "main", "high", "high10", "high422", "high444"]),
    ),
    ("level", &["level:v"], Check::Level),
    ("deadline", &[], Check::OneOf(&["good", "best", "realtime"])),
    ("cpu-used", &[], Check::Int(-16, 16)),
    ("row-mt", &[], Check::Int(0, 1)),
    ("tile-columns", &[], Check::Int(0, 6)),
    ("r", &[], Check::Rate),
    ("g", &[], Check::Int(1, 1000)),
    ("keyint_min", &[], Check::Int(1, 1000)),
    ("bf", &[], Check::Int(0, 16)),
    ("refs", &[], Check::Int(1, 16)),
    ("ar", &[], Check::Int(8000, 192_000)),
    ("ac", &[], Check::Int(1, 8)),
    ("an", &[], Check::Flag),
    ("vn", &[], Check::Flag),
    ("sn", &[], Check::Flag),
    ("ss", &[], Check::Time),
    ("t", &[], Check::Time),
    ("to", &[], Check::Time),
    (
        "pix_fmt",
        &[],
        Check::OneOf(&[
            "yuv420p",
            "yuv422p",
            "yuv444p",
            "yuv420p10le",
            "yuvj420p",
            "rgb24",
            "rgba",
            "gray",
        ]),
    ),
    (
        "movflags",
        &[],
        Check::OneOf(&["faststart", "+faststart", "frag_keyframe+empty_moov"]),
    ),
    ("threads", &[], Check::Int(0, 16)),
];

impl FfmpegOptions {
    /// Checks a step's `ffmpeg` object. Keys outside the allowed set, and values outside a key's
    /// check, are [`EngineError::Invalid`] naming the key.
    pub fn parse(object: &serde_json::Map<String, Value>) -> Result<Self, EngineError> {
        let mut out = Vec::new();
        for (key, value) in object {
            let bare = key.strip_prefix('-').unwrap_or(key);
            let Some((name, _, check)) = ALLOWED
                .iter()
                .find(|(name, aliases, _)| *name == bare || aliases.contains(&bare))
            else {
                return Err(EngineError::Invalid(format!(
                    "ffmpeg option {key:?} is not in the allowed set ({})",
                    allowed_names()
                )));
            };
            if value.is_null() {
                out.push((*name, None));
                continue;
            }
            let text = value_text(value).ok_or_else(|| {
                EngineError::Invalid(format!("ffmpeg option {key:?} needs a string or number"))
            })?;
            if !passes(*check, &text) {
                return Err(EngineError::Invalid(format!(
                    "ffmpeg option {key:?} has a bad value {text:?}"
                )));
            }
            out.push((*name, Some(value.clone())));
        }
        Ok(Self(out))
    }

    /// The options of `preset` with `overrides` merged over them (later wins; `null` removes).
    pub(crate) fn merged(
        preset: &[(&'static str, &str)],
        overrides: &FfmpegOptions,
    ) -> Vec<(&'static str, Option<String>)> {
        let mut merged: Vec<(&'static str, Option<String>)> = preset
            .iter()
            .map(|(k, v)| (*k, Some((*v).to_owned())))
            .collect();
        for (key, value) in &overrides.0 {
            merged.retain(|(k, _)| k != key);
            if let Some(value) = value {
                merged.push((key, value_text(value)));
            }
        }
        merged
    }
}

/// Arguments for merged options: `-key value`, or `-key` alone for flags.
pub(crate) fn to_args(options: &[(&'static str, Option<String>)]) -> Vec<std::ffi::OsString> {
    let mut args = Vec::new();
    for (key, value) in options {
        let flag = ALLOWED
            .iter()
            .any(|(name, _, check)| name == key && matches!(check, Check::Flag));
        match value {
            Some(v) if flag && v == "false" => {}
            Some(_) if flag => args.push(format!("-{key}").into()),
            Some(v) => args.extend([format!("-{key}").into(), v.into()]),
            None => {}
        }
    }
    args
}

fn allowed_names() -> String {
    ALLOWED
        .iter()
        .map(|(name, _, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn passes(check: Check, text: &str) -> bool {
    let number = |t: &str| t.parse::<f64>().ok().filter(|n| n.is_finite());
    match check {
        Check::Codec(list) | Check::OneOf(list) => list.contains(&text),
        Check::Bitrate => {
            let digits = text.strip_suffix(['k', 'K', 'm', 'M']).unwrap_or(text);
            number(digits).is_some_and(|n| n > 0.0)
                && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        }
        Check::Int(lo, hi) => text.parse::<i64>().is_ok_and(|n| (lo..=hi).contains(&n)),
        Check::Num(lo, hi) => number(text).is_some_and(|n| (lo..=hi).contains(&n)),
        Check::Rate => match text.split_once('/') {
            Some((a, b)) => {
                a.parse::<u32>().is_ok_and(|a| (1..=240_000).contains(&a))
                    && b.parse::<u32>().is_ok_and(|b| (1..=1001).contains(&b))
            }
            None => number(text).is_some_and(|n| n > 0.0 && n <= 240.0),
        },
        Check::Time => {
            let parts: Vec<&str> = text.split(':').collect();
            parts.len() <= 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
                && parts.iter().all(|p| number(p).is_some())
        }
        Check::Level => {
            text.len() <= 3
                && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && number(text).is_some()
        }
        Check::Flag => matches!(text, "true" | "false" | ""),
    }
}

/// Accepts Transloadit's `ffmpeg_stack` forms: `v5`..`v8`, optionally `.minor` and `.patch`
/// (`v6`, `v6.0`, `v6.0.0`; the leading `v` is optional). The installed ffmpeg runs whatever the
/// stack names; the value only has to be one of the documented ones.
pub fn check_ffmpeg_stack(stack: &str) -> Result<(), EngineError> {
    let bare = stack.strip_prefix('v').unwrap_or(stack);
    let mut parts = bare.split('.');
    let major_ok = parts
        .next()
        .is_some_and(|m| matches!(m, "5" | "6" | "7" | "8"));
    let rest: Vec<&str> = parts.collect();
    let rest_ok = rest.len() <= 2
        && rest
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()));
    if major_ok && rest_ok {
        Ok(())
    } else {
        Err(EngineError::Invalid(format!(
            "ffmpeg_stack {stack:?} is not a supported version (v5, v6, v7 or v8, e.g. \"v6.0.0\")"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<FfmpegOptions, EngineError> {
        FfmpegOptions::parse(value.as_object().expect("object"))
    }

    #[test]
    fn allowed_options_pass_with_aliases_normalised() {
        let options = parse(
            json!({"vcodec": "libx264", "crf": 23, "b:a": "128k", "an": true, "-preset": "fast"}),
        )
        .expect("allowed");
        let merged = FfmpegOptions::merged(&[("crf", "30"), ("c:a", "aac")], &options);
        let args: Vec<String> = to_args(&merged)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        // Preset order first, then the step's options (a serde_json map: sorted keys).
        assert_eq!(
            args,
            [
                "-c:a", "aac", "-preset", "fast", "-an", "-b:a", "128k", "-crf", "23", "-c:v",
                "libx264"
            ]
        );
    }

    #[test]
    fn filters_raw_arguments_and_bad_values_are_refused() {
        for bad in [
            json!({"vf": "movie=/etc/passwd"}),
            json!({"filter_complex": "x"}),
            json!({"i": "/etc/passwd"}),
            json!({"f": "hls"}),
            json!({"c:v": "libx264 -i /etc/passwd"}),
            json!({"b:v": "-1k"}),
            json!({"crf": 99}),
            json!({"ss": "1; rm"}),
            json!({"r": [1]}),
        ] {
            assert!(
                matches!(parse(bad.clone()), Err(EngineError::Invalid(_))),
                "{bad} was accepted"
            );
        }
    }

    #[test]
    fn null_removes_a_preset_option() {
        let options = parse(json!({"b:v": null})).expect("null");
        assert_eq!(
            FfmpegOptions::merged(&[("b:v", "1M"), ("crf", "23")], &options),
            [("crf", Some("23".to_owned()))]
        );
    }

    #[test]
    fn ffmpeg_stack_accepts_the_documented_forms() {
        for ok in ["v5", "v6.0.0", "7.1", "v8.0"] {
            assert!(check_ffmpeg_stack(ok).is_ok(), "{ok}");
        }
        for bad in ["v3.3.3", "latest", "v6.0.0.0", "v6.", ""] {
            assert!(check_ffmpeg_stack(bad).is_err(), "{bad}");
        }
    }
}
