//! The fast origin for link-import benchmarks: `GET /ANY` answers one file with its
//! `Content-Length`, sent with `std::io::copy` from the file to the socket, which Linux turns into
//! `sendfile` (no copy through user space). Beside the Node origin of `bench/companion`, it tells
//! whether a slow import is the origin's doing or the importer's. `HEAD` answers the headers only;
//! any other method gets 405. One thread per connection, one request per connection
//! (`Connection: close`), no `Range`: the benchmark never resumes.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

use crate::Error;

/// Request heads longer than this are refused (a benchmark client sends a few hundred bytes).
const MAX_HEAD: usize = 64 * 1024;

/// Serves `file` on 127.0.0.1:`port` until killed.
pub fn run(port: u16, file: PathBuf) -> Result<(), Error> {
    // Fail at start, not at the first request, when the file is missing.
    File::open(&file)?;
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let file = file.clone();
        std::thread::spawn(move || {
            if let Err(err) = answer(stream, &file) {
                eprintln!("origin: {err}");
            }
        });
    }
    Ok(())
}

/// Reads one request head and answers it.
fn answer(stream: TcpStream, path: &Path) -> Result<(), Error> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut head = request_line.len();
    loop {
        let mut line = String::new();
        let read = reader.read_line(&mut line)?;
        head += read;
        if read == 0 || line == "\r\n" || line == "\n" {
            break;
        }
        if head > MAX_HEAD {
            return reply(stream, "431 Request Header Fields Too Large");
        }
    }
    let method = request_line.split(' ').next().unwrap_or("");
    if method != "GET" && method != "HEAD" {
        return reply(stream, "405 Method Not Allowed");
    }
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut out = stream;
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {size}\r\nconnection: close\r\n\r\n"
    )?;
    if method == "GET" {
        std::io::copy(&mut file, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// An empty answer with `status` ("405 Method Not Allowed").
fn reply(mut out: TcpStream, status: &str) -> Result<(), Error> {
    write!(
        out,
        "HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    )?;
    Ok(())
}
