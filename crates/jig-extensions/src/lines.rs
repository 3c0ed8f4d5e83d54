//! Bounded reading of newline-delimited output.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Longest line accepted from an extension's stdout: 32 MiB. A `context` reply carrying a long
/// conversation fits; a process writing without end does not make the host buffer it all.
pub const MAX_LINE_BYTES: usize = 32 * 1024 * 1024;

/// Why a line could not be read.
#[derive(Debug)]
pub(crate) enum LineError {
    /// More than `max` bytes before a newline.
    TooLong(usize),
    /// The pipe failed.
    Io(std::io::Error),
}

/// Reads one `\n`-terminated line into `line` (without the newline; a trailing `\r` is kept).
/// `Ok(false)` at end of input with nothing read. Never holds more than `max` bytes: past that
/// the rest of the line is not read and [`LineError::TooLong`] is returned.
pub(crate) async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> Result<bool, LineError> {
    line.clear();
    loop {
        let available = reader.fill_buf().await.map_err(LineError::Io)?;
        if available.is_empty() {
            return Ok(!line.is_empty());
        }
        match memchr::memchr(b'\n', available) {
            Some(end) => {
                if line.len() + end > max {
                    return Err(LineError::TooLong(max));
                }
                line.extend_from_slice(&available[..end]);
                reader.consume(end + 1);
                return Ok(true);
            }
            None => {
                let taken = available.len();
                if line.len() + taken > max {
                    return Err(LineError::TooLong(max));
                }
                line.extend_from_slice(available);
                reader.consume(taken);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_split_and_bounded() {
        let data: &[u8] = b"one\ntwo\nthree";
        let mut reader = tokio::io::BufReader::with_capacity(2, data);
        let mut line = Vec::new();
        assert!(read_line_bounded(&mut reader, &mut line, 10).await.unwrap());
        assert_eq!(line, b"one");
        assert!(read_line_bounded(&mut reader, &mut line, 10).await.unwrap());
        assert_eq!(line, b"two");
        assert!(read_line_bounded(&mut reader, &mut line, 10).await.unwrap());
        assert_eq!(line, b"three");
        assert!(!read_line_bounded(&mut reader, &mut line, 10).await.unwrap());
        let long: &[u8] = b"0123456789abc\n";
        let mut reader = tokio::io::BufReader::with_capacity(4, long);
        assert!(matches!(
            read_line_bounded(&mut reader, &mut line, 10).await,
            Err(LineError::TooLong(10))
        ));
    }
}
