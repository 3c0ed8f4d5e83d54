//! Strict JSONL over stdin and stdout, for the faces a program drives (an app over RPC, an
//! editor over ACP): a record ends at LF only (a CR before it is dropped), so U+2028 and U+2029
//! inside JSON strings are data; one writer puts each record on stdout whole.

use std::io::{self, Read as _, Write as _};
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The one writer of a stream of records: every record is written whole, then flushed, so
/// records written from different tasks never interleave.
pub struct Writer {
    sink: Mutex<Box<dyn io::Write + Send>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer").finish_non_exhaustive()
    }
}

impl Writer {
    /// A writer of `sink` (stdout, or a buffer in tests).
    pub fn new(sink: Box<dyn io::Write + Send>) -> Self {
        Self {
            sink: Mutex::new(sink),
        }
    }

    /// Writes `record` as one line. A closed stream is not an error here: the program on the
    /// other side went away, and the session ends when its input closes.
    pub fn send(&self, record: &Value) {
        let mut line = serde_json::to_vec(record).unwrap_or_else(|error| {
            json!({"type": "error", "error": format!("cannot serialise a record: {error}")})
                .to_string()
                .into_bytes()
        });
        line.push(b'\n');
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = sink.write_all(&line).and_then(|()| sink.flush());
    }
}

/// Splits `buffer` into complete LF-terminated records (a trailing CR dropped from each),
/// leaving an unterminated tail in `buffer`.
pub fn take_records(buffer: &mut Vec<u8>) -> Vec<Vec<u8>> {
    let mut records = Vec::new();
    let mut start = 0;
    while let Some(at) = buffer[start..].iter().position(|&byte| byte == b'\n') {
        let end = start + at;
        let mut record = &buffer[start..end];
        if let [rest @ .., b'\r'] = record {
            record = rest;
        }
        records.push(record.to_vec());
        start = end + 1;
    }
    buffer.drain(..start);
    records
}

/// Reads stdin on a thread of its own, one record at a time (blank lines skipped, a last
/// record without its LF read when stdin closes). `divert` sees each record first and keeps
/// it when it returns `true` (an answer the session waits for, delivered at once even while
/// the session is busy); the others go to the channel, which closes at the end of stdin.
pub fn read_stdin(
    divert: impl Fn(&[u8]) -> bool + Send + 'static,
) -> mpsc::UnboundedReceiver<Vec<u8>> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let mut stdin = io::stdin().lock();
        let mut buffer = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        let forward = |record: Vec<u8>| {
            if record.iter().all(u8::is_ascii_whitespace) || divert(&record) {
                return true;
            }
            tx.send(record).is_ok()
        };
        loop {
            let read = match stdin.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            buffer.extend_from_slice(&chunk[..read]);
            for record in take_records(&mut buffer) {
                if !forward(record) {
                    return;
                }
            }
        }
        if !buffer.is_empty() {
            forward(std::mem::take(&mut buffer));
        }
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_end_at_lf_only_and_lose_a_trailing_cr() {
        let mut buffer = "{\"a\":\"x\u{2028}y\"}\r\n{\"b\":1}\n{\"c\""
            .as_bytes()
            .to_vec();
        let records = take_records(&mut buffer);
        assert_eq!(
            records,
            vec![
                "{\"a\":\"x\u{2028}y\"}".as_bytes().to_vec(),
                b"{\"b\":1}".to_vec()
            ]
        );
        assert_eq!(buffer, b"{\"c\"".to_vec());
    }
}
