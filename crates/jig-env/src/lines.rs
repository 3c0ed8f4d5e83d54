//! The window of lines `read_lines` returns, computed the same way by every env.

use crate::types::{Line, LineWindow, LinesRead};

/// The state of a [`read_lines`](crate::ExecutionEnv::read_lines) scan, fed chunk by chunk:
/// every env computes the window of lines with this, so the counting rules (a last line without
/// `\n` counts, a trailing `\n` does not start a new line, a long line is cut to the byte budget
/// and the line that reaches the budget is the last one kept) live in one place.
#[derive(Debug)]
pub struct LineScanner<'w> {
    window: &'w LineWindow,
    lines: Vec<Line>,
    /// Lines completed so far (terminated by `\n`).
    completed: u64,
    /// Bytes of the current, unterminated line seen so far.
    current_len: u64,
    /// The kept prefix of the current line, when it is in the window.
    current: Vec<u8>,
    /// Bytes kept in `lines` (the byte budget counts these).
    collected: usize,
    /// The window is full: only count from here on.
    done: bool,
    total_bytes: u64,
}

impl<'w> LineScanner<'w> {
    /// A scan for `window` (`start_line` 1 or more) at the start of a file.
    pub fn new(window: &'w LineWindow) -> Self {
        Self {
            window,
            lines: Vec::new(),
            completed: 0,
            current_len: 0,
            current: Vec::new(),
            collected: 0,
            done: window.max_lines == 0,
            total_bytes: 0,
        }
    }

    fn in_window(&self) -> bool {
        !self.done && self.completed + 1 >= self.window.start_line
    }

    fn keep(&mut self, piece: &[u8]) {
        let room = self.window.max_bytes.saturating_sub(self.current.len());
        self.current
            .extend_from_slice(&piece[..piece.len().min(room)]);
    }

    fn end_line(&mut self) {
        if self.in_window() {
            let bytes = std::mem::take(&mut self.current);
            self.collected = self.collected.saturating_add(bytes.len());
            self.lines.push(Line {
                number: self.completed + 1,
                bytes,
                full_len: self.current_len,
            });
            if self.lines.len() >= self.window.max_lines || self.collected >= self.window.max_bytes
            {
                self.done = true;
            }
        }
        self.completed += 1;
        self.current_len = 0;
    }

    /// Feeds the next bytes of the file.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.total_bytes += chunk.len() as u64;
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.done {
                // Only counting is left: let memchr run over the whole remainder.
                let newlines = memchr::memchr_iter(b'\n', rest).count();
                self.completed += newlines as u64;
                self.current_len = match memchr::memrchr(b'\n', rest) {
                    Some(last) => (rest.len() - last - 1) as u64,
                    None => self.current_len + rest.len() as u64,
                };
                return;
            }
            if let Some(end) = memchr::memchr(b'\n', rest) {
                if self.in_window() {
                    self.keep(&rest[..end]);
                }
                self.current_len += end as u64;
                self.end_line();
                rest = &rest[end + 1..];
            } else {
                if self.in_window() {
                    self.keep(rest);
                }
                self.current_len += rest.len() as u64;
                rest = &[];
            }
        }
    }

    /// Feeds `count` zero bytes without materialising them (a hole of a sparse file): they hold
    /// no line break, so they only lengthen the current line.
    pub fn feed_zeros(&mut self, count: u64) {
        if self.in_window() {
            let room = self.window.max_bytes.saturating_sub(self.current.len());
            let take = room.min(usize::try_from(count).unwrap_or(usize::MAX));
            self.current.resize(self.current.len() + take, 0);
        }
        self.current_len += count;
        self.total_bytes += count;
    }

    /// Takes over a count made elsewhere (only once the window [is full](Self::is_full)): the
    /// next `bytes` bytes hold `newlines` line breaks, and `tail` bytes follow the last of them
    /// (`None` when they hold none).
    pub fn add_count(&mut self, newlines: u64, tail: Option<u64>, bytes: u64) {
        self.completed += newlines;
        self.current_len = match tail {
            Some(tail) => tail,
            None => self.current_len + bytes,
        };
        self.total_bytes += bytes;
    }

    /// True once the window is full: what is left is only counted.
    pub fn is_full(&self) -> bool {
        self.done
    }

    /// How many bytes were fed so far.
    pub fn bytes_seen(&self) -> u64 {
        self.total_bytes
    }

    /// The answer for the bytes fed.
    pub fn finish(mut self) -> LinesRead {
        if self.current_len > 0 {
            self.end_line();
        }
        LinesRead {
            lines: self.lines,
            total_lines: self.completed,
            total_bytes: self.total_bytes,
        }
    }
}

/// The [`read_lines`](crate::ExecutionEnv::read_lines) answer for a file whose whole `content` is
/// in memory: what every env returns for that file and window. `window.start_line` must be 1 or
/// more (the env methods reject 0 before getting here).
pub fn lines_window(content: &[u8], window: &LineWindow) -> LinesRead {
    let mut scanner = LineScanner::new(window);
    scanner.feed(content);
    scanner.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start_line: u64, max_lines: usize, max_bytes: usize) -> LineWindow {
        LineWindow {
            start_line,
            max_lines,
            max_bytes,
        }
    }

    fn scan(chunks: &[&[u8]], window: &LineWindow) -> LinesRead {
        let mut scanner = LineScanner::new(window);
        for chunk in chunks {
            scanner.feed(chunk);
        }
        scanner.finish()
    }

    #[test]
    fn scanner_agrees_for_every_split_of_the_input() {
        let content: &[u8] = b"alpha\r\nbeta\n\ngamma delta\nlast";
        for start_line in 1..=6 {
            for max_bytes in [1, 3, 6, 100] {
                let window = LineWindow {
                    start_line,
                    max_lines: 2,
                    max_bytes,
                };
                let whole = scan(&[content], &window);
                for split in 0..content.len() {
                    let (head, tail) = content.split_at(split);
                    for second in split..content.len() {
                        let (middle, end) = tail.split_at(second - split);
                        let parts = scan(&[head, middle, end], &window);
                        assert_eq!(
                            parts, whole,
                            "start {start_line}, budget {max_bytes}, splits {split}/{second}"
                        );
                    }
                }
                assert_eq!(whole.total_lines, 5);
            }
        }
    }

    #[test]
    fn lines_window_counts_like_the_contract() {
        let read = lines_window(b"a\nb\n", &window(1, 10, 100));
        assert_eq!(read.total_lines, 2);
        let read = lines_window(b"a\nb", &window(1, 10, 100));
        assert_eq!(read.total_lines, 2);
        assert_eq!(read.lines[1].bytes, b"b");
        let read = lines_window(b"", &window(1, 10, 100));
        assert_eq!((read.total_lines, read.lines.len()), (0, 0));
        let read = lines_window(b"\n", &window(1, 10, 100));
        assert_eq!(read.total_lines, 1);
        assert_eq!(read.lines[0].bytes, b"");
    }

    #[test]
    fn lines_window_cuts_a_long_line_and_stops_at_the_byte_budget() {
        let read = lines_window(b"abcdef\nxy\n", &window(1, 10, 4));
        assert_eq!(read.lines.len(), 1);
        assert_eq!(read.lines[0].bytes, b"abcd");
        assert_eq!(read.lines[0].full_len, 6);
        assert_eq!(read.total_lines, 2);
        // The line that reaches the budget is returned whole when it fits by itself.
        let read = lines_window(b"ab\ncd\nef\n", &window(1, 10, 3));
        assert_eq!(
            read.lines
                .iter()
                .map(|line| line.bytes.clone())
                .collect::<Vec<_>>(),
            vec![b"ab".to_vec(), b"cd".to_vec()]
        );
    }
}
