//! Human-readable byte sizes for notices (`50.0KB`).

/// `n < 1024` → `"<n>B"`; below 1 MiB → one decimal and `KB`; else one decimal and `MB`.
pub(crate) fn format_size(bytes: u64) -> String {
    #[expect(
        clippy::cast_precision_loss,
        reason = "one decimal of a size is all that is shown"
    )]
    let value = bytes as f64;
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", value / 1024.0)
    } else {
        format!("{:.1}MB", value / (1024.0 * 1024.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_print_like_pi() {
        assert_eq!(format_size(0), "0B");
        assert_eq!(format_size(1023), "1023B");
        assert_eq!(format_size(51200), "50.0KB");
        assert_eq!(format_size(1536), "1.5KB");
        assert_eq!(format_size(200 * 1024 * 1024), "200.0MB");
    }
}
