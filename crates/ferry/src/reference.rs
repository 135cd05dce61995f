//! The option tables of `docs/` (server, security, deployment), made from clap's declarations
//! of `ferry serve`, so the documentation cannot drift from `--help`: one Markdown table per
//! options struct (`ServeConfig`, `S3Args`, `HooksArgs`, ...), each row the flag, its variable
//! (with Companion's name where `compat` maps one), its default and its help text.
//! `tests/surface.rs` keeps the tables in `docs/*.md` equal to these.

use clap::{ArgAction, CommandFactory};

use crate::Cli;

/// Every options struct of `ferry serve` (by its clap group id, `ServeConfig` first) with its
/// table. Options outside any struct's group are listed under `ServeConfig`.
pub fn option_tables() -> Vec<(String, String)> {
    let cli = Cli::command();
    let Some(serve) = cli.find_subcommand("serve") else {
        return Vec::new();
    };
    let group_ids: Vec<&str> = serve.get_groups().map(|g| g.get_id().as_str()).collect();
    let documented = |arg: &clap::Arg| {
        !arg.is_hide_set() && !arg.is_positional() && !matches!(arg.get_id().as_str(), "help")
    };
    let mut tables: Vec<(String, Vec<&clap::Arg>)> = serve
        .get_groups()
        .map(|group| {
            let args = group
                .get_args()
                .filter(|id| !group_ids.contains(&id.as_str()))
                .filter_map(|id| serve.get_arguments().find(|a| a.get_id() == id))
                .filter(|arg| documented(arg))
                .collect();
            (group.get_id().to_string(), args)
        })
        .collect();
    // clap's derive gives no group to a struct that flattens another (`CompanionArgs` holds
    // `ProviderArgs`), so its own options are found from its declaration; what is left is
    // `ServeConfig`'s own.
    let nesting = [(
        "CompanionArgs",
        <crate::companion::CompanionArgs as clap::Args>::augment_args(clap::Command::new("x")),
    )];
    for (id, declared) in &nesting {
        let grouped = grouped_ids(&tables);
        let own: Vec<&clap::Arg> = serve
            .get_arguments()
            .filter(|arg| documented(arg) && !grouped.contains(&arg.get_id().as_str()))
            .filter(|arg| declared.get_arguments().any(|d| d.get_id() == arg.get_id()))
            .collect();
        tables.push(((*id).to_owned(), own));
    }
    let grouped = grouped_ids(&tables);
    let loose: Vec<&clap::Arg> = serve
        .get_arguments()
        .filter(|arg| documented(arg) && !grouped.contains(&arg.get_id().as_str()))
        .collect();
    tables.insert(0, ("ServeConfig".to_owned(), loose));
    tables
        .into_iter()
        .filter(|(_, args)| !args.is_empty())
        .map(|(id, args)| (id, table(&args)))
        .collect()
}

/// The ids of the options already placed in a table.
fn grouped_ids<'a>(tables: &[(String, Vec<&'a clap::Arg>)]) -> Vec<&'a str> {
    tables
        .iter()
        .flat_map(|(_, args)| args.iter().map(|a| a.get_id().as_str()))
        .collect()
}

/// One Markdown table: flag, environment, default, meaning.
fn table(args: &[&clap::Arg]) -> String {
    let mut out = String::from("| flag | environment | default | meaning |\n|---|---|---|---|\n");
    for arg in args {
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            flag(arg),
            env(arg),
            default(arg),
            meaning(arg)
        ));
    }
    out
}

/// `` `--listen <LISTEN>` ``; switches have no value.
fn flag(arg: &clap::Arg) -> String {
    let long = arg.get_long().unwrap_or_default();
    let takes_value = !matches!(
        arg.get_action(),
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
    );
    match arg.get_value_names() {
        Some([name, ..]) if takes_value => format!("`--{long} <{name}>`"),
        _ if takes_value => format!("`--{long} <{}>`", arg.get_id().as_str().to_uppercase()),
        _ => format!("`--{long}`"),
    }
}

/// `` `FERRY_X` `` and, where Companion has a name for it, `` (`COMPANION_Y`) ``.
fn env(arg: &clap::Arg) -> String {
    let Some(name) = arg.get_env().and_then(|n| n.to_str()) else {
        return "—".to_owned();
    };
    let companion: Vec<String> = crate::compat::MAPPING
        .iter()
        .filter(|(_, ferry)| *ferry == name)
        .map(|(companion, _)| format!("`{companion}`"))
        .collect();
    if companion.is_empty() {
        format!("`{name}`")
    } else {
        format!("`{name}` ({})", companion.join(", "))
    }
}

/// The declared default; switches are off, options without one are unset.
fn default(arg: &clap::Arg) -> String {
    if matches!(arg.get_action(), ArgAction::SetTrue) {
        return "off".to_owned();
    }
    let values: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    match values.as_slice() {
        [] => "none".to_owned(),
        [one] if one.is_empty() => "empty".to_owned(),
        _ => format!("`{}`", values.join(",")),
    }
}

/// The help text on one line (Markdown cells cannot hold line breaks), with the accepted
/// values of an enumerated option.
fn meaning(arg: &clap::Arg) -> String {
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    let mut text = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !values.is_empty() && !matches!(arg.get_action(), ArgAction::SetTrue) {
        text.push_str(&format!(" (one of {})", values.join(", ")));
    }
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::option_tables;

    /// Every documented option lands in exactly one table.
    #[test]
    fn every_option_is_in_one_table() {
        let tables = option_tables();
        let all: String = tables.iter().map(|(_, t)| t.as_str()).collect();
        for flag in [
            "`--listen <LISTEN>`",
            "`--s3-bucket <",
            "`--hooks-http <",
            "`--no-ui`",
        ] {
            assert_eq!(all.matches(flag).count(), 1, "{flag} in {all}");
        }
        assert!(
            all.contains("`FERRY_S3_BUCKET` (`COMPANION_AWS_BUCKET`)"),
            "{all}"
        );
        assert!(!all.contains("`--help`"), "{all}");
        let table = |id: &str| {
            tables
                .iter()
                .find(|(group, _)| group == id)
                .map(|(_, t)| t.clone())
                .unwrap_or_else(|| panic!("no {id} table"))
        };
        assert!(table("ServeConfig").contains("`--listen <LISTEN>`"));
        assert!(!table("ServeConfig").contains("`--allow-local-urls`"));
        assert!(table("CompanionArgs").contains("`--allow-local-urls`"));
        assert!(!table("CompanionArgs").contains("`--google-key"));
        assert!(table("ProviderArgs").contains("`--google-key <"));
    }
}
