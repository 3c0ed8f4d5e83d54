//! Property tests: for any text and limits, both functions stay within both limits, return a
//! prefix (head) or suffix (tail) on character boundaries, and report accurate counts.

use jig_truncate::{TruncatedBy, TruncationOptions, count_lines, truncate_head, truncate_tail};
use proptest::prelude::*;

/// Texts rich in newlines, CRs and multi-byte characters, so cuts land in awkward places.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            3 => Just("\n".to_owned()),
            1 => Just("\r\n".to_owned()),
            1 => Just("é".to_owned()),
            1 => Just("€".to_owned()),
            1 => Just("😀".to_owned()),
            4 => "[a-z ]{0,12}",
            1 => any::<String>(),
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

fn limits() -> impl Strategy<Value = TruncationOptions> {
    (0usize..12, 0usize..80).prop_map(|(max_lines, max_bytes)| TruncationOptions {
        max_lines,
        max_bytes,
    })
}

/// The input's lines, without the empty piece after a trailing newline.
fn lines(text: &str) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    text.strip_suffix('\n')
        .unwrap_or(text)
        .split('\n')
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn head_is_a_bounded_prefix(text in text(), opts in limits()) {
        let r = truncate_head(&text, opts);
        prop_assert!(text.starts_with(r.content));
        prop_assert!(text.is_char_boundary(r.content.len()));
        prop_assert!(r.content.len() <= opts.max_bytes || !r.truncated);
        prop_assert!(r.output_lines <= opts.max_lines || !r.truncated);
        prop_assert_eq!(r.total_lines, count_lines(&text));
        prop_assert_eq!(r.total_bytes, text.len());
        prop_assert_eq!(r.output_bytes, r.content.len());
        prop_assert_eq!((r.max_lines, r.max_bytes), (opts.max_lines, opts.max_bytes));
        prop_assert!(!r.last_line_partial);

        let fits = r.total_lines <= opts.max_lines && text.len() <= opts.max_bytes;
        prop_assert_eq!(r.truncated, !fits);
        prop_assert_eq!(r.truncated_by.is_some(), r.truncated);
        if !r.truncated {
            prop_assert_eq!(r.content, text.as_str());
            prop_assert_eq!(r.output_lines, r.total_lines);
            return Ok(());
        }

        let all = lines(&text);
        if r.first_line_exceeds_limit {
            prop_assert!(all[0].len() > opts.max_bytes);
            prop_assert_eq!(r.content, "");
            prop_assert_eq!(r.output_lines, 0);
            return Ok(());
        }
        // Whole lines only, joined without a trailing newline, and as many as fit.
        prop_assert_eq!(r.content, all[..r.output_lines].join("\n"));
        if r.output_lines < all.len() {
            let with_next = all[..=r.output_lines].join("\n");
            let next_fits = with_next.len() <= opts.max_bytes;
            let lines_full = r.output_lines == opts.max_lines;
            prop_assert!(lines_full || !next_fits, "stopped early: {:?}", r);
            let expected = if lines_full { TruncatedBy::Lines } else { TruncatedBy::Bytes };
            prop_assert_eq!(r.truncated_by, Some(expected));
        } else {
            // Every line kept: only the final newline was over the byte budget.
            prop_assert!(text.ends_with('\n'));
            prop_assert_eq!(r.content.len() + 1, text.len());
            prop_assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        }
    }

    #[test]
    fn tail_is_a_bounded_suffix(text in text(), opts in limits()) {
        let r = truncate_tail(&text, opts);
        prop_assert!(text.ends_with(r.content));
        prop_assert!(text.is_char_boundary(text.len() - r.content.len()));
        prop_assert!(r.content.len() <= opts.max_bytes || !r.truncated);
        prop_assert!(r.output_lines <= opts.max_lines || !r.truncated);
        prop_assert_eq!(r.total_lines, count_lines(&text));
        prop_assert_eq!(r.total_bytes, text.len());
        prop_assert_eq!(r.output_bytes, r.content.len());
        prop_assert!(!r.first_line_exceeds_limit);

        let fits = r.total_lines <= opts.max_lines && text.len() <= opts.max_bytes;
        prop_assert_eq!(r.truncated, !fits);
        prop_assert_eq!(r.truncated_by.is_some(), r.truncated);
        if !r.truncated {
            prop_assert_eq!(r.content, text.as_str());
            return Ok(());
        }

        let start = text.len() - r.content.len();
        let at_line_start = start == 0 || text.as_bytes()[start - 1] == b'\n';
        if r.last_line_partial {
            // Only the last line is cut, and only because it alone is too long; at most three
            // bytes (one split character) of budget are left unused.
            prop_assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
            prop_assert!(!r.content.trim_end_matches('\n').contains('\n'));
            prop_assert!(r.content.len() + 3 >= opts.max_bytes);
            prop_assert_eq!(r.output_lines, 1);
        } else {
            prop_assert!(at_line_start || r.content.is_empty());
            prop_assert_eq!(r.output_lines, count_lines(r.content));
            // As many whole lines as fit: one more would break a limit.
            let all = lines(&text);
            prop_assert!(r.output_lines < all.len());
            let lines_full = r.output_lines == opts.max_lines;
            // The line before the kept suffix ends just before `start` (or, when nothing was
            // kept, it is the input's last line, ending before any trailing newline).
            let next_end = if r.content.is_empty() {
                text.strip_suffix('\n').unwrap_or(&text).len()
            } else {
                start - 1
            };
            let next_start = text.as_bytes()[..next_end]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let next_fits = text.len() - next_start <= opts.max_bytes;
            prop_assert!(lines_full || !next_fits, "stopped early: {:?}", r);
            let expected = if lines_full { TruncatedBy::Lines } else { TruncatedBy::Bytes };
            prop_assert_eq!(r.truncated_by, Some(expected));
        }
    }
}

proptest! {
    #[test]
    fn char_boundaries_are_nearest(text in text(), idx in 0usize..200) {
        let floor = jig_truncate::floor_char_boundary(&text, idx);
        let ceil = jig_truncate::ceil_char_boundary(&text, idx);
        prop_assert!(text.is_char_boundary(floor) && text.is_char_boundary(ceil));
        prop_assert!(floor <= idx.min(text.len()) && ceil >= idx.min(text.len()));
        prop_assert!((floor + 1..idx.min(text.len())).all(|i| !text.is_char_boundary(i)));
        prop_assert!((idx..ceil).all(|i| !text.is_char_boundary(i)));
    }

    #[test]
    fn truncate_line_keeps_at_most_max_chars(line in any::<String>(), max in 0usize..20) {
        let (out, cut) = jig_truncate::truncate_line(&line, max);
        prop_assert_eq!(cut, line.chars().count() > max);
        if cut {
            let kept = out.strip_suffix(jig_truncate::LINE_TRUNCATED_MARKER).unwrap();
            prop_assert_eq!(kept.chars().count(), max);
            prop_assert!(line.starts_with(kept));
        } else {
            prop_assert_eq!(out.as_ref(), line.as_str());
        }
    }
}
