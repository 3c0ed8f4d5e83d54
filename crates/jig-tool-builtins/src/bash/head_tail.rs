//! The bounded full-output file: the first and the last part of a command's raw output.

use jig_truncate::format_size;

/// Keeps the first `head` and the last `tail` bytes of a stream, so a command that prints
/// without end (`yes`) fills at most `head + tail` bytes of disk (plus one marker line) and
/// holds at most `2 * tail` bytes of memory.
#[derive(Debug)]
pub(super) struct HeadTail {
    head: u64,
    tail: usize,
    /// Bytes handed out for the head so far.
    written: u64,
    /// The latest bytes after the head: at most `2 * tail`, cut back to `tail` when longer.
    kept: Vec<u8>,
    /// Bytes after the head that are no longer kept.
    dropped: u64,
}

impl HeadTail {
    /// Keeps at most `max_bytes`: the first half and the last half.
    pub(super) fn new(max_bytes: u64) -> Self {
        let head = max_bytes / 2;
        Self {
            head,
            tail: usize::try_from(max_bytes - head).unwrap_or(usize::MAX),
            written: 0,
            kept: Vec::new(),
            dropped: 0,
        }
    }

    /// Takes the next bytes of the stream; returns the part that belongs to the head, to be
    /// written now. The rest is kept for the tail.
    pub(super) fn push<'c>(&mut self, chunk: &'c [u8]) -> &'c [u8] {
        let room = usize::try_from(self.head - self.written).unwrap_or(usize::MAX);
        let (now, later) = chunk.split_at(room.min(chunk.len()));
        self.written += now.len() as u64;
        if !later.is_empty() {
            self.kept.extend_from_slice(later);
            if self.kept.len() > self.tail.saturating_mul(2) {
                self.cut_to_tail();
            }
        }
        now
    }

    fn cut_to_tail(&mut self) {
        let excess = self.kept.len().saturating_sub(self.tail);
        if excess > 0 {
            self.kept.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// Ends the stream: what to write after the head (a marker naming what was left out, then
    /// the tail) and how many bytes were left out.
    pub(super) fn finish(mut self) -> (Vec<u8>, u64) {
        self.cut_to_tail();
        if self.dropped == 0 {
            return (self.kept, 0);
        }
        let mut out = format!(
            "\n[... {} left out here: this file keeps the first {} and the last {} of the \
             output ...]\n",
            describe_bytes(self.dropped),
            format_size(usize::try_from(self.head).unwrap_or(usize::MAX)),
            format_size(self.tail),
        )
        .into_bytes();
        out.extend_from_slice(&self.kept);
        (out, self.dropped)
    }
}

/// `1234 bytes (1.2KB)`.
pub(super) fn describe_bytes(bytes: u64) -> String {
    format!(
        "{bytes} bytes ({})",
        format_size(usize::try_from(bytes).unwrap_or(usize::MAX))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in chunks of `chunk` bytes; returns the file's content and the drop count.
    fn run(max: u64, input: &[u8], chunk: usize) -> (Vec<u8>, u64) {
        let mut kept = HeadTail::new(max);
        let mut file = Vec::new();
        for piece in input.chunks(chunk) {
            file.extend_from_slice(kept.push(piece));
        }
        let (rest, dropped) = kept.finish();
        file.extend_from_slice(&rest);
        (file, dropped)
    }

    #[test]
    fn output_within_the_cap_is_kept_whole() {
        let input: Vec<u8> = (0..100u8).collect();
        for chunk in [1, 7, 100] {
            assert_eq!(run(100, &input, chunk), (input.clone(), 0));
        }
    }

    #[test]
    fn longer_output_keeps_head_and_tail_with_a_marker() {
        let input: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        for chunk in [1, 13, 64, 10_000] {
            let (file, dropped) = run(100, &input, chunk);
            assert_eq!(dropped, 9_900);
            assert!(file.starts_with(&input[..50]));
            assert!(file.ends_with(&input[input.len() - 50..]));
            let marker = &file[50..file.len() - 50];
            let marker = String::from_utf8_lossy(marker);
            assert!(
                marker.contains("9900 bytes") && marker.contains("left out"),
                "{marker}"
            );
        }
    }

    #[test]
    fn memory_stays_within_twice_the_tail() {
        let mut kept = HeadTail::new(1000);
        for _ in 0..10_000 {
            let _ = kept.push(&[b'y'; 97]);
            assert!(kept.kept.len() <= 1000);
        }
        let (_, dropped) = kept.finish();
        assert_eq!(dropped, 970_000 - 1000);
    }
}
