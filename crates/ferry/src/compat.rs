//! Companion's environment names (`COMPANION_*`) mapped onto Ferry's (`FERRY_*`) before the
//! command line is parsed, so a Companion deployment can switch by changing the image only.
//! A Ferry variable that is already set wins; each mapped variable is reported once (by name,
//! never by value).

/// `(Companion's name, Ferry's name)`.
pub const MAPPING: &[(&str, &str)] = &[
    ("COMPANION_SECRET", "FERRY_SECRET"),
    ("COMPANION_UPLOAD_URLS", "FERRY_UPLOAD_URLS"),
    ("COMPANION_CLIENT_ORIGINS", "FERRY_CORS_ORIGINS"),
    ("COMPANION_ALLOW_LOCAL_URLS", "FERRY_ALLOW_LOCAL_URLS"),
    ("COMPANION_MAX_FILE_SIZE", "FERRY_MAX_FILE_SIZE"),
    ("COMPANION_AWS_KEY", "FERRY_S3_ACCESS_KEY"),
    ("COMPANION_AWS_SECRET", "FERRY_S3_SECRET_KEY"),
    ("COMPANION_AWS_BUCKET", "FERRY_S3_BUCKET"),
    ("COMPANION_AWS_REGION", "FERRY_S3_REGION"),
    ("COMPANION_AWS_ENDPOINT", "FERRY_S3_ENDPOINT"),
    ("COMPANION_AWS_PREFIX", "FERRY_S3_KEY_PREFIX"),
    ("COMPANION_AWS_EXPIRES", "FERRY_S3_EXPIRES"),
    ("COMPANION_REDIS_URL", "FERRY_REDIS_URL"),
    (
        "COMPANION_AWS_FORCE_PATH_STYLE",
        "FERRY_S3_FORCE_PATH_STYLE",
    ),
    ("COMPANION_GOOGLE_KEY", "FERRY_GOOGLE_KEY"),
    ("COMPANION_GOOGLE_SECRET", "FERRY_GOOGLE_SECRET"),
    ("COMPANION_INSTAGRAM_KEY", "FERRY_INSTAGRAM_KEY"),
    ("COMPANION_INSTAGRAM_SECRET", "FERRY_INSTAGRAM_SECRET"),
    ("COMPANION_BOX_KEY", "FERRY_BOX_KEY"),
    ("COMPANION_BOX_SECRET", "FERRY_BOX_SECRET"),
    ("COMPANION_UNSPLASH_KEY", "FERRY_UNSPLASH_KEY"),
    ("COMPANION_UNSPLASH_SECRET", "FERRY_UNSPLASH_SECRET"),
    ("COMPANION_DROPBOX_KEY", "FERRY_DROPBOX_KEY"),
    ("COMPANION_DROPBOX_SECRET", "FERRY_DROPBOX_SECRET"),
    ("COMPANION_ONEDRIVE_KEY", "FERRY_ONEDRIVE_KEY"),
    ("COMPANION_ONEDRIVE_SECRET", "FERRY_ONEDRIVE_SECRET"),
    (
        "COMPANION_ENABLE_GOOGLE_PICKER_ENDPOINT",
        "FERRY_GOOGLE_PICKER",
    ),
    ("COMPANION_ZOOM_KEY", "FERRY_ZOOM_KEY"),
    ("COMPANION_ZOOM_SECRET", "FERRY_ZOOM_SECRET"),
    ("COMPANION_FACEBOOK_KEY", "FERRY_FACEBOOK_KEY"),
    ("COMPANION_FACEBOOK_SECRET", "FERRY_FACEBOOK_SECRET"),
];

/// One variable to set: `(ferry name, value, companion name)`.
pub type Mapped = (String, String, &'static str);

/// The `FERRY_*` assignments implied by `get` (an environment lookup), with Companion's value
/// forms converted: `COMPANION_PORT` becomes a listen address on every interface (`0.0.0.0`, where Companion listens) unless
/// `FERRY_LISTEN` is set, `COMPANION_CLIENT_ORIGINS=true` means any origin, and
/// `COMPANION_UPLOAD_URLS` regexes of the plain `^https://host/path` kind become prefixes.
pub fn plan(get: impl Fn(&str) -> Option<String>) -> Vec<Mapped> {
    let mut out = Vec::new();
    for (from, to) in MAPPING {
        let (Some(value), None) = (get(from), get(to)) else {
            continue;
        };
        let value = match *from {
            "COMPANION_UPLOAD_URLS" => upload_urls(&value),
            "COMPANION_CLIENT_ORIGINS" if value.trim() == "true" => "*".to_owned(),
            _ => value,
        };
        out.push(((*to).to_owned(), value, *from));
    }
    if let (Some(port), None) = (get("COMPANION_PORT"), get("FERRY_LISTEN")) {
        if let Ok(port) = port.trim().parse::<u16>() {
            out.push((
                "FERRY_LISTEN".to_owned(),
                format!("0.0.0.0:{port}"),
                "COMPANION_PORT",
            ));
        }
    }
    out
}

/// Companion's upload URLs are regexes; the common anchored-literal ones become prefixes.
fn upload_urls(value: &str) -> String {
    value
        .split(',')
        .map(|entry| {
            let e = entry.trim().trim_start_matches('^');
            let e = e
                .strip_suffix(".*$")
                .or_else(|| e.strip_suffix(".*"))
                .unwrap_or(e);
            e.trim_end_matches('$')
                .replace("\\.", ".")
                .replace("\\/", "/")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The long flag of a `FERRY_*` variable this module may set, and whether it is a switch.
fn flag_of(var: &str) -> Option<(&'static str, bool)> {
    Some(match var {
        "FERRY_SECRET" => ("--secret", false),
        "FERRY_UPLOAD_URLS" => ("--upload-urls", false),
        "FERRY_CORS_ORIGINS" => ("--cors-origins", false),
        "FERRY_ALLOW_LOCAL_URLS" => ("--allow-local-urls", true),
        "FERRY_MAX_FILE_SIZE" => ("--max-file-size", false),
        "FERRY_S3_ACCESS_KEY" => ("--s3-access-key", false),
        "FERRY_S3_SECRET_KEY" => ("--s3-secret-key", false),
        "FERRY_S3_BUCKET" => ("--s3-bucket", false),
        "FERRY_S3_REGION" => ("--s3-region", false),
        "FERRY_S3_ENDPOINT" => ("--s3-endpoint", false),
        "FERRY_S3_FORCE_PATH_STYLE" => ("--s3-force-path-style", true),
        "FERRY_LISTEN" => ("--listen", false),
        "FERRY_GOOGLE_KEY" => ("--google-key", false),
        "FERRY_GOOGLE_SECRET" => ("--google-secret", false),
        "FERRY_INSTAGRAM_KEY" => ("--instagram-key", false),
        "FERRY_INSTAGRAM_SECRET" => ("--instagram-secret", false),
        "FERRY_BOX_KEY" => ("--box-key", false),
        "FERRY_BOX_SECRET" => ("--box-secret", false),
        "FERRY_UNSPLASH_KEY" => ("--unsplash-key", false),
        "FERRY_UNSPLASH_SECRET" => ("--unsplash-secret", false),
        "FERRY_DROPBOX_KEY" => ("--dropbox-key", false),
        "FERRY_DROPBOX_SECRET" => ("--dropbox-secret", false),
        "FERRY_ONEDRIVE_KEY" => ("--onedrive-key", false),
        "FERRY_ONEDRIVE_SECRET" => ("--onedrive-secret", false),
        "FERRY_GOOGLE_PICKER" => ("--google-picker", true),
        "FERRY_ZOOM_KEY" => ("--zoom-key", false),
        "FERRY_ZOOM_SECRET" => ("--zoom-secret", false),
        "FERRY_FACEBOOK_KEY" => ("--facebook-key", false),
        "FERRY_FACEBOOK_SECRET" => ("--facebook-secret", false),
        _ => return None,
    })
}

/// The command line with Companion's environment applied: each planned variable becomes its
/// flag right after `serve`, unless that flag is already on the command line (flags win). The
/// environment itself is not modified (that would need `unsafe` in edition 2024). Returns the
/// arguments and the Companion variable names that were used, for one warning each.
pub fn args_with_env(
    args: Vec<std::ffi::OsString>,
    get: impl Fn(&str) -> Option<String>,
) -> (Vec<std::ffi::OsString>, Vec<&'static str>) {
    let Some(serve) = args.iter().position(|a| a == "serve") else {
        return (args, Vec::new());
    };
    let present = |flag: &str| {
        args.iter().any(|a| {
            a.to_str()
                .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
        })
    };
    let mut extra = Vec::new();
    let mut used = Vec::new();
    for (to, value, from) in plan(get) {
        let Some((flag, switch)) = flag_of(&to) else {
            continue;
        };
        if present(flag) {
            continue;
        }
        if switch {
            if matches!(value.trim(), "true" | "1" | "yes") {
                extra.push(flag.into());
            }
        } else {
            extra.push(format!("{flag}={value}").into());
        }
        used.push(from);
    }
    let mut out = args;
    out.splice(serve + 1..serve + 1, extra);
    (out, used)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn maps_unset_ferry_variables_only() {
        let env: HashMap<&str, &str> = HashMap::from([
            ("COMPANION_SECRET", "s"),
            ("COMPANION_CLIENT_ORIGINS", "true"),
            (
                "COMPANION_UPLOAD_URLS",
                "^https://up\\.example\\.com/files/.*$,http://127.0.0.1:1080",
            ),
            ("COMPANION_AWS_BUCKET", "b"),
            ("FERRY_S3_BUCKET", "mine"),
            ("COMPANION_PORT", "3020"),
            ("COMPANION_REDIS_URL", "redis://r:6379/1"),
        ]);
        let plan = plan(|k| env.get(k).map(|v| (*v).to_owned()));
        let get = |name: &str| {
            plan.iter()
                .find(|(to, _, _)| to == name)
                .map(|(_, v, _)| v.as_str())
        };
        assert_eq!(get("FERRY_SECRET"), Some("s"));
        assert_eq!(get("FERRY_CORS_ORIGINS"), Some("*"));
        assert_eq!(
            get("FERRY_UPLOAD_URLS"),
            Some("https://up.example.com/files/,http://127.0.0.1:1080")
        );
        assert_eq!(get("FERRY_S3_BUCKET"), None);
        assert_eq!(get("FERRY_LISTEN"), Some("0.0.0.0:3020"));
        assert_eq!(get("FERRY_REDIS_URL"), Some("redis://r:6379/1"));
    }

    #[test]
    fn flags_on_the_command_line_win() {
        let env: HashMap<&str, &str> = HashMap::from([
            ("COMPANION_SECRET", "s"),
            ("COMPANION_ALLOW_LOCAL_URLS", "true"),
            ("COMPANION_AWS_REGION", "eu-west-1"),
        ]);
        let args = ["ferry", "serve", "--secret", "flag"]
            .map(std::ffi::OsString::from)
            .to_vec();
        let (out, used) = args_with_env(args, |k| env.get(k).map(|v| (*v).to_owned()));
        let out: Vec<String> = out
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(out[..2], ["ferry", "serve"]);
        assert!(out.contains(&"--allow-local-urls".to_owned()));
        assert!(out.contains(&"--s3-region=eu-west-1".to_owned()));
        assert!(!out.iter().any(|a| a == "--secret=s"));
        assert!(!used.contains(&"COMPANION_SECRET"));
    }

    #[test]
    fn companions_google_picker_switch_enables_the_route_only_when_true() {
        for (value, on) in [("true", true), ("false", false)] {
            let args = ["ferry", "serve"].map(std::ffi::OsString::from).to_vec();
            let get =
                |k: &str| (k == "COMPANION_ENABLE_GOOGLE_PICKER_ENDPOINT").then(|| value.into());
            let (out, _) = args_with_env(args, get);
            assert_eq!(out.iter().any(|a| a == "--google-picker"), on, "{value}");
        }
    }
}
