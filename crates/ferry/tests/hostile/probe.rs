//! The probe: one hostile request and the answer it must get (status, and the JSON `message`
//! or the body's first line). A route's table is a list of probes run against one server; the
//! runner sends every probe and reports every mismatch at once, so a new probe is one line and
//! a failing run says everything that is wrong.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The application secret of every server the suite starts.
pub const SECRET: &str = "hostile-suite-secret";

/// How long any one probe may take before it counts as a hang.
const PROBE_LIMIT: Duration = Duration::from_secs(10);

pub use crate::common::{Server, serve as start};

/// A token for `sub` under [`SECRET`], valid for ten minutes.
pub fn token(sub: &str) -> String {
    crate::common::token(SECRET, sub, |_| {})
}

/// What a probe sends.
enum Request {
    Http {
        method: reqwest::Method,
        path: String,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Bytes written as they are on a fresh connection (shapes no HTTP client would send).
    Raw(Vec<u8>),
}

/// One hostile request and the answer it must get.
pub struct Probe {
    name: String,
    request: Request,
    status: u16,
    /// The JSON `message` (or the body's first line when it is not JSON); `None`: not checked.
    message: Option<String>,
}

/// A probe of `method path`, answered 200 with no message check until [`Probe::expect`].
pub fn http(name: &str, method: &str, path: impl Into<String>) -> Probe {
    Probe {
        name: name.to_owned(),
        request: Request::Http {
            method: method.parse().expect("method"),
            path: path.into(),
            headers: vec![("Tus-Resumable".into(), "1.0.0".into())],
            body: Vec::new(),
        },
        status: 200,
        message: None,
    }
}

/// A probe that writes `bytes` on a fresh connection and reads the status line.
pub fn raw(name: &str, bytes: impl Into<Vec<u8>>) -> Probe {
    Probe {
        name: name.to_owned(),
        request: Request::Raw(bytes.into()),
        status: 400,
        message: None,
    }
}

impl Probe {
    /// Adds a header (replacing one of the same name).
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        if let Request::Http { headers, .. } = &mut self.request {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            headers.push((name.to_owned(), value.into()));
        }
        self
    }

    /// Removes a header.
    pub fn without(mut self, name: &str) -> Self {
        if let Request::Http { headers, .. } = &mut self.request {
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        }
        self
    }

    /// `Authorization: Bearer token`.
    pub fn bearer(self, token: &str) -> Self {
        self.header("Authorization", format!("Bearer {token}"))
    }

    /// The request body.
    pub fn body(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        if let Request::Http { body, .. } = &mut self.request {
            *body = bytes.into();
        }
        self
    }

    /// The answer it must get: `status`, and `message` unless it is empty.
    pub fn expect(mut self, status: u16, message: &str) -> Self {
        self.status = status;
        self.message = (!message.is_empty()).then(|| message.to_owned());
        self
    }

    /// Sends the probe; `Err` says what differed.
    async fn run(&self, server: &Server) -> Result<(), String> {
        let answer = tokio::time::timeout(PROBE_LIMIT, self.send(server))
            .await
            .map_err(|_| format!("no answer within {PROBE_LIMIT:?}"))??;
        let (status, message) = answer;
        let status_ok = status == self.status;
        let message_ok = self.message.as_ref().is_none_or(|want| *want == message);
        if status_ok && message_ok {
            Ok(())
        } else {
            Err(format!(
                "got {status} {message:?}, want {} {:?}",
                self.status, self.message
            ))
        }
    }

    async fn send(&self, server: &Server) -> Result<(u16, String), String> {
        match &self.request {
            Request::Http {
                method,
                path,
                headers,
                body,
            } => {
                let client = reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .expect("client");
                let mut req = client
                    .request(method.clone(), format!("{}{path}", server.base))
                    .body(body.clone());
                for (name, value) in headers {
                    req = req.header(name, value);
                }
                let res = req.send().await.map_err(|e| format!("send: {e}"))?;
                let status = res.status().as_u16();
                let text = res.text().await.unwrap_or_default();
                Ok((status, message_of(&text)))
            }
            Request::Raw(bytes) => {
                let mut stream = TcpStream::connect(server.addr)
                    .await
                    .map_err(|e| format!("connect: {e}"))?;
                // A server may answer and close before it has read everything (a head too
                // large): the answer is what counts, so a failed write still reads it.
                let _ = stream.write_all(bytes).await;
                let mut answer = Vec::new();
                let mut buf = [0u8; 4096];
                // The status line is all a raw probe checks.
                while !answer.windows(2).any(|w| w == b"\r\n") {
                    let n = stream
                        .read(&mut buf)
                        .await
                        .map_err(|e| format!("read: {e}"))?;
                    if n == 0 {
                        return Err("closed without an answer".into());
                    }
                    answer.extend_from_slice(&buf[..n]);
                }
                let text = String::from_utf8_lossy(&answer);
                let status = text
                    .split(' ')
                    .nth(1)
                    .and_then(|s| s.parse().ok())
                    .ok_or_else(|| format!("no status line in {text:?}"))?;
                Ok((status, String::new()))
            }
        }
    }
}

/// The JSON `message` of an error body, or its first line.
fn message_of(text: &str) -> String {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| text.lines().next().unwrap_or_default().to_owned())
}

/// Runs every probe against `server`, in order, and fails with the list of mismatches.
pub async fn run_table(server: &Server, probes: Vec<Probe>) {
    let mut failures = Vec::new();
    for probe in &probes {
        if let Err(why) = probe.run(server).await {
            failures.push(format!("{}: {why}", probe.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} probes answered wrongly:\n{}",
        failures.len(),
        probes.len(),
        failures.join("\n")
    );
}
