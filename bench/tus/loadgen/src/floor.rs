//! The receive-and-store floor: the least any server that stores a request body can do over
//! loopback. No HTTP framework, no runtime: blocking `read`s of up to 1 MiB and plain `write`s
//! of what they returned (no fsync). Every byte is copied twice, socket to user space and user
//! space to the page cache, which is what storing it costs at the least; `dd` pays the second
//! copy and a read from the page cache, the discard sink only the first. With one thread the
//! socket is not read while a write runs (the least work, but the two copies never overlap);
//! with two (`--threads 2`) a reader fills 1 MiB buffers and a writer stores them, as a server
//! that overlaps network and disk does (ferry does). PUT /ANY stores the body (`Content-Length`
//! only); OPTIONS answers 204 (the readiness probe of run.sh); one request per connection.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::Error;

/// Request heads longer than this are refused (curl sends a few hundred bytes).
const MAX_HEAD: usize = 64 * 1024;

/// Bytes asked of each `read`.
const READ: usize = 1024 * 1024;

/// Serves on 127.0.0.1:`port` until killed, one connection at a time, with one thread or two
/// (reader and writer).
pub fn run(port: u16, file: PathBuf, threads: u8) -> Result<(), Error> {
    let listener = TcpListener::bind(("127.0.0.1", port))?;
    let mut buf = vec![0u8; READ];
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        if let Err(err) = answer(stream, &file, &mut buf, threads > 1) {
            eprintln!("floor: {err}");
        }
    }
    Ok(())
}

/// Reads one request and answers it.
fn answer(
    mut stream: TcpStream,
    path: &Path,
    buf: &mut [u8],
    pipelined: bool,
) -> Result<(), Error> {
    let mut filled = 0;
    let end = loop {
        let n = stream.read(&mut buf[filled..MAX_HEAD])?;
        if n == 0 {
            return Ok(());
        }
        filled += n;
        if let Some(at) = buf[..filled].windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if filled == MAX_HEAD {
            return reply(stream, "431 Request Header Fields Too Large");
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let method = head.split(' ').next().unwrap_or("");
    if method == "OPTIONS" {
        return reply(stream, "204 No Content");
    }
    if method != "PUT" {
        return reply(stream, "405 Method Not Allowed");
    }
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<u64>().ok())?
    });
    let Some(length) = length else {
        return reply(stream, "411 Length Required");
    };
    let mut out = File::create(path)?;
    let early = &buf[end..filled];
    let early = &early[..early.len().min(length as usize)];
    out.write_all(early)?;
    let mut left = length - early.len() as u64;
    if pipelined {
        pipeline(&mut stream, out, left)?;
        return reply(stream, "204 No Content");
    }
    while left > 0 {
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = stream.read(&mut buf[..want])?;
        if n == 0 {
            return Err("the body ended early".into());
        }
        out.write_all(&buf[..n])?;
        left -= n as u64;
    }
    reply(stream, "204 No Content")
}

/// Reads `left` bytes into 1 MiB buffers (each filled before it is handed over) while a
/// second thread writes the previous ones; two buffers take turns.
fn pipeline(stream: &mut TcpStream, mut out: File, mut left: u64) -> Result<(), Error> {
    let (full_tx, full_rx) = mpsc::sync_channel::<(Vec<u8>, usize)>(1);
    let (empty_tx, empty_rx) = mpsc::sync_channel::<Vec<u8>>(2);
    for _ in 0..2 {
        empty_tx.send(vec![0u8; READ])?;
    }
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        for (buf, len) in full_rx {
            out.write_all(&buf[..len])?;
            if empty_tx.send(buf).is_err() {
                break;
            }
        }
        Ok(())
    });
    while left > 0 {
        let mut buf = empty_rx.recv()?;
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let mut len = 0;
        while len < want {
            let n = stream.read(&mut buf[len..want])?;
            if n == 0 {
                return Err("the body ended early".into());
            }
            len += n;
        }
        left -= len as u64;
        full_tx.send((buf, len))?;
    }
    drop(full_tx);
    writer.join().map_err(|_| "the writer thread panicked")??;
    Ok(())
}

fn reply(mut stream: TcpStream, status: &str) -> Result<(), Error> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    Ok(())
}
