//! What an update stream sends, derived from the record and from what its client has already
//! seen (a [`Cursor`], sent as each event's SSE `id` so a reconnecting client hands it back in
//! `Last-Event-ID`). Names and payloads are those Uppy's `@uppy/transloadit` and Transloadit's
//! SDKs read:
//!
//! - `assembly_upload_finished` (event): an upload's file object;
//! - `assembly_uploading_finished` (message): the uploads are in, the Assembly executes;
//! - `assembly_upload_meta_data_extracted` (message): the uploads' `meta` is filled in;
//! - `assembly_result_finished` (event): `[step, result file object]`;
//! - `assembly_execution_progress` (event): `{progress_combined, progress_per_original_file}`,
//!   when the params set `emit_execution_progress`;
//! - `assembly_finished` (message) or `assembly_error` (event: the status with `error`), last.
//!
//! Deriving events from the record instead of queueing them makes a stream exact after anything:
//! a missed poke, a reconnect, a restart of the server (the new process reads the same record and
//! the client's cursor). Uppy does not de-duplicate uploads or results, so nothing is sent twice
//! on one cursor.

use std::fmt;

use serde_json::Value;

use crate::assembly::record::{Assembly, State};
use crate::assembly::status::{Urls, file_json, status};

/// How far a client has seen an Assembly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cursor {
    /// 0: nothing; 1: uploading finished; 2: meta data extracted; 3: the end.
    phase: u8,
    /// Uploads sent.
    uploads: usize,
    /// Results sent, per exported step in the order of the Assembly's steps.
    results: Vec<usize>,
    /// The execution progress last sent on this connection (not part of the id: a reconnecting
    /// client gets the current figure again).
    progress: Option<crate::live::progress::Snapshot>,
}

/// A cursor longer than this is not one of ours.
const MAX_CURSOR: usize = 4096;

impl Cursor {
    /// Reads a cursor this module wrote (`phase.uploads.r0.r1...`); anything else is `None`.
    pub fn parse(raw: &str) -> Option<Self> {
        if raw.is_empty() || raw.len() > MAX_CURSOR {
            return None;
        }
        let mut parts = raw.split('.');
        let phase: u8 = parts.next()?.parse().ok().filter(|p| *p <= 3)?;
        let uploads = parts.next()?.parse().ok()?;
        let results = parts
            .map(|p| p.parse().ok())
            .collect::<Option<Vec<usize>>>()?;
        Some(Self {
            phase,
            uploads,
            results,
            progress: None,
        })
    }

    /// Whether the client saw the Assembly end.
    pub fn saw_end(&self) -> bool {
        self.phase >= 3
    }
}

impl fmt::Display for Cursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.phase, self.uploads)?;
        for r in &self.results {
            write!(f, ".{r}")?;
        }
        Ok(())
    }
}

/// One thing to send.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// A message: `data: NAME`, no payload.
    Message(&'static str),
    /// A named event with a JSON payload.
    Event(&'static str, Value),
}

/// A thing to send and the cursor once the client has it.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub out: Out,
    pub cursor: String,
}

/// Whether the Assembly left its uploading phase for execution (a cancel or an abort while
/// uploading did not).
fn uploads_over(a: &Assembly) -> bool {
    matches!(a.state, State::Executing | State::Completed | State::Failed)
}

/// What `a` holds beyond `cursor`, in the order Uppy expects (uploads, uploading finished,
/// meta data, results, the end); `cursor` moves past it.
pub fn next(a: &Assembly, cursor: &mut Cursor, urls: &Urls) -> Vec<Update> {
    let url = urls.assembly(a.id.as_str());
    let mut emit = Vec::new();
    for f in a.uploads.iter().skip(cursor.uploads) {
        cursor.uploads += 1;
        emit.push((
            Out::Event("assembly_upload_finished", file_json(f, &url)),
            cursor.to_string(),
        ));
    }
    if cursor.phase < 1 && uploads_over(a) {
        cursor.phase = 1;
        emit.push((
            Out::Message("assembly_uploading_finished"),
            cursor.to_string(),
        ));
    }
    let extracted = a.upload_meta_data_extracted || a.state == State::Completed;
    if cursor.phase == 1 && extracted {
        cursor.phase = 2;
        emit.push((
            Out::Message("assembly_upload_meta_data_extracted"),
            cursor.to_string(),
        ));
    }
    let exported = a.steps.iter().filter(|s| s.export);
    for (i, step) in exported.enumerate() {
        if cursor.results.len() <= i {
            cursor.results.resize(i + 1, 0);
        }
        let files = a.results.get(&step.name).map(Vec::as_slice).unwrap_or(&[]);
        for f in files.iter().skip(cursor.results[i]) {
            cursor.results[i] += 1;
            let data = Value::Array(vec![Value::String(step.name.clone()), file_json(f, &url)]);
            emit.push((
                Out::Event("assembly_result_finished", data),
                cursor.to_string(),
            ));
        }
    }
    // Sent only when the params ask for it (`emit_execution_progress`), as Transloadit does;
    // also the final 100 before `assembly_finished`, so a client's bar ends full even when the
    // steps were quicker than the progress saver.
    let wanted = a.params.get("emit_execution_progress") == Some(&Value::Bool(true));
    let running = matches!(a.state, State::Executing | State::Completed);
    if wanted && running && a.execution_progress != cursor.progress {
        if let Some(p) = &a.execution_progress {
            cursor.progress = Some(p.clone());
            let (combined, per) = crate::assembly::status::progress_json(p);
            let data = serde_json::json!({
                "progress_combined": combined,
                "progress_per_original_file": per,
            });
            emit.push((
                Out::Event("assembly_execution_progress", data),
                cursor.to_string(),
            ));
        }
    }
    if cursor.phase < 3 {
        let end = match a.state {
            State::Completed => Some(Out::Message("assembly_finished")),
            State::Failed => Some(Out::Event("assembly_error", status(a, urls))),
            _ => None,
        };
        if let Some(end) = end {
            cursor.phase = 3;
            emit.push((end, cursor.to_string()));
        }
    }
    emit.into_iter()
        .map(|(out, cursor)| Update { out, cursor })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_strangers_are_refused() {
        let c = Cursor {
            phase: 2,
            uploads: 3,
            results: vec![1, 0, 4],
            progress: None,
        };
        assert_eq!(c.to_string(), "2.3.1.0.4");
        assert_eq!(Cursor::parse("2.3.1.0.4"), Some(c));
        assert_eq!(Cursor::parse("0.0").map(|c| c.saw_end()), Some(false));
        for bad in [
            "",
            "4.0",
            "x.1",
            "1",
            "1.2.-3",
            "1.2.3.",
            &"1.".repeat(3000),
        ] {
            assert_eq!(Cursor::parse(bad), None, "{bad:?}");
        }
    }
}
