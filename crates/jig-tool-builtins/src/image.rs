//! Images in `read`: detected by content, checked and, when needed, resized or converted before
//! they reach a model, so an image a provider would refuse never enters a conversation.
//!
//! The pipeline: [`sniff_image`] the magic bytes (the extension is ignored); read the dimensions and
//! the EXIF orientation from the header; an image in a format the provider takes that is within
//! the limits passes through byte for byte; anything else (too large, too many bytes, BMP, a
//! format the provider does not take) is decoded, oriented, scaled to fit (aspect kept) and
//! re-encoded as the smaller of PNG and JPEG that fits. An image that cannot be decoded or
//! brought under the limits becomes a text explanation, never an image block.

use std::fmt::Write as _;
use std::io::Cursor;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::imageops::FilterType;
use image::{
    AnimationDecoder, DynamicImage, ImageDecoder, ImageEncoder, ImageFormat, ImageReader, Limits,
};
use jig_protocol::ContentBlock;
use jig_tool::paths::ResolvedPath;
use jig_tool::{ToolContext, ToolError, ToolOutput};

use crate::details::{ImageDetails, ReadDetails, SentImage};
use crate::failure::{self, Action};

/// 4.5 MiB: the default cap on an image's base64 payload.
pub const DEFAULT_IMAGE_MAX_BASE64_BYTES: usize = 4_718_592;
/// The default cap on each image dimension, in pixels.
pub const DEFAULT_IMAGE_MAX_DIMENSION: u32 = 2000;

/// An image format `read` recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// JPEG (not JPEG-LS).
    Jpeg,
    /// PNG, including animated PNG.
    Png,
    /// GIF.
    Gif,
    /// WebP.
    Webp,
    /// Windows bitmap.
    Bmp,
}

impl ImageKind {
    /// The MIME type (`image/png`).
    pub fn mime(self) -> &'static str {
        match self {
            Self::Jpeg => "image/jpeg",
            Self::Png => "image/png",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
            Self::Bmp => "image/bmp",
        }
    }

    fn format(self) -> ImageFormat {
        match self {
            Self::Jpeg => ImageFormat::Jpeg,
            Self::Png => ImageFormat::Png,
            Self::Gif => ImageFormat::Gif,
            Self::Webp => ImageFormat::WebP,
            Self::Bmp => ImageFormat::Bmp,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Jpeg => "JPEG",
            Self::Png => "PNG",
            Self::Gif => "GIF",
            Self::Webp => "WebP",
            Self::Bmp => "BMP",
        }
    }

    /// A short human name (`PNG image`).
    pub fn description(self) -> &'static str {
        match self {
            Self::Jpeg => "JPEG image",
            Self::Png => "PNG image",
            Self::Gif => "GIF image",
            Self::Webp => "WebP image",
            Self::Bmp => "BMP image",
        }
    }

    /// The format whose magic bytes `bytes` start with. This is the one place the image
    /// signatures are written down; [`sniff_image`] also checks that the header is sound.
    pub fn from_magic(bytes: &[u8]) -> Option<Self> {
        let at = |offset: usize, signature: &[u8]| {
            bytes.get(offset..offset + signature.len()) == Some(signature)
        };
        if at(0, b"\x89PNG\r\n\x1a\n") {
            Some(Self::Png)
        } else if at(0, b"\xFF\xD8\xFF") {
            Some(Self::Jpeg)
        } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
            Some(Self::Gif)
        } else if at(0, b"RIFF") && at(8, b"WEBP") {
            Some(Self::Webp)
        } else if at(0, b"BM") && bytes.len() >= 26 && bytes[6..10] == [0, 0, 0, 0] {
            Some(Self::Bmp)
        } else {
            None
        }
    }
}

/// What images a provider takes, and how large. Hosts set it per provider.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImageConfig {
    /// Whether images are returned at all; when false, `read` describes them as binary files.
    pub enabled: bool,
    /// The widest image sent, in pixels.
    pub max_width: u32,
    /// The tallest image sent, in pixels.
    pub max_height: u32,
    /// The largest base64 payload sent, in bytes.
    pub max_base64_bytes: usize,
    /// Formats sent as they are; anything else is converted (BMP always is).
    pub accepted: Vec<ImageKind>,
    /// JPEG qualities tried, in order, when re-encoding.
    pub jpeg_qualities: Vec<u8>,
}

impl Default for ImageConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            max_width: DEFAULT_IMAGE_MAX_DIMENSION,
            max_height: DEFAULT_IMAGE_MAX_DIMENSION,
            max_base64_bytes: DEFAULT_IMAGE_MAX_BASE64_BYTES,
            accepted: vec![
                ImageKind::Jpeg,
                ImageKind::Png,
                ImageKind::Gif,
                ImageKind::Webp,
            ],
            jpeg_qualities: vec![80, 70, 55, 40],
        }
    }
}

impl ImageConfig {
    /// The same options with other limits (each at least 1).
    #[must_use]
    pub fn with_limits(mut self, max_width: u32, max_height: u32, max_base64_bytes: usize) -> Self {
        self.max_width = max_width.max(1);
        self.max_height = max_height.max(1);
        self.max_base64_bytes = max_base64_bytes.max(1);
        self
    }
}

/// The image format of `bytes`, by content only: its magic bytes ([`ImageKind::from_magic`])
/// and a sound start of its header.
pub fn sniff_image(bytes: &[u8]) -> Option<ImageKind> {
    let kind = ImageKind::from_magic(bytes)?;
    let sound = match kind {
        // Not JPEG-LS (`FF D8 FF F7`), which no provider takes.
        ImageKind::Jpeg => bytes.get(3).is_some_and(|&marker| marker != 0xF7),
        // The first chunk is a 13-byte IHDR.
        ImageKind::Png => bytes.get(8..16) == Some(b"\0\0\0\x0DIHDR"),
        ImageKind::Gif | ImageKind::Webp => true,
        ImageKind::Bmp => is_bmp(bytes),
    };
    sound.then_some(kind)
}

/// The width and height an encoded image declares in its header (`None` when `bytes` are not a
/// sound image of a format `read` knows).
pub fn image_dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let kind = sniff_image(bytes)?;
    reader(bytes, kind).into_dimensions().ok()
}

/// Whether a PNG has an `acTL` chunk before its first `IDAT` (an animated PNG).
fn is_apng(bytes: &[u8]) -> bool {
    let mut offset = 8;
    while offset + 8 <= bytes.len() {
        let length = u32::from_be_bytes([
            bytes[offset],
            bytes[offset + 1],
            bytes[offset + 2],
            bytes[offset + 3],
        ]) as usize;
        let kind = &bytes[offset + 4..offset + 8];
        if kind == b"acTL" {
            return true;
        }
        if kind == b"IDAT" {
            return false;
        }
        offset = match offset
            .checked_add(12)
            .and_then(|next| next.checked_add(length))
        {
            Some(next) => next,
            None => return false,
        };
    }
    false
}

fn is_bmp(bytes: &[u8]) -> bool {
    if bytes.len() < 26 || &bytes[..2] != b"BM" {
        return false;
    }
    let u32_at =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
    let declared = u32_at(2);
    let pixel_offset = u32_at(10);
    let dib = u32_at(14);
    if declared != 0 && declared < 26 {
        return false;
    }
    if pixel_offset < 14 + dib || (declared != 0 && pixel_offset >= declared) {
        return false;
    }
    let (planes, bits) = match dib {
        12 => (u16_at(22), u16_at(24)),
        40..=124 if bytes.len() >= 30 => (u16_at(26), u16_at(28)),
        _ => return false,
    };
    planes == 1 && matches!(bits, 1 | 4 | 8 | 16 | 24 | 32)
}

/// What [`process_image`] made of an image file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageOutcome {
    /// An image block to send, with the text line that goes before it.
    Image {
        /// `Read image file [image/png]` plus hints, one per line.
        text: String,
        /// The base64 payload.
        data: String,
        /// Its MIME type.
        mime: &'static str,
        /// Original width and height (oriented).
        original: (u32, u32),
        /// Width and height sent.
        displayed: (u32, u32),
        /// True when the bytes sent are not the file's own bytes.
        converted: bool,
    },
    /// No image block: the text says why.
    Omitted {
        /// `Read image file [<mime>]` and the reason.
        text: String,
    },
}

impl ImageOutcome {
    /// `read`'s output for this outcome.
    pub fn into_output(self, size: u64) -> ToolOutput<ReadDetails> {
        match self {
            Self::Image {
                text,
                data,
                mime,
                original,
                displayed,
                converted,
            } => ToolOutput {
                content: vec![
                    ContentBlock::text(text),
                    ContentBlock::Image {
                        data,
                        mime_type: mime.to_owned(),
                    },
                ],
                details: ReadDetails::Image {
                    image: ImageDetails::Sent(SentImage {
                        mime_type: mime.to_owned(),
                        original_width: original.0,
                        original_height: original.1,
                        width: displayed.0,
                        height: displayed.1,
                        converted,
                        file_bytes: size,
                    }),
                },
                is_error: false,
            },
            Self::Omitted { text } => ToolOutput::text(
                text,
                ReadDetails::Image {
                    image: ImageDetails::Omitted {
                        omitted: true,
                        file_bytes: size,
                    },
                },
            ),
        }
    }
}

struct Header {
    width: u32,
    height: u32,
    orientation: image::metadata::Orientation,
    animated: bool,
}

fn reader(bytes: &[u8], kind: ImageKind) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), kind.format());
    let mut limits = Limits::default();
    // A decompression bomb (a tiny file declaring a gigantic canvas) is refused, not decoded.
    limits.max_image_width = Some(50_000);
    limits.max_image_height = Some(50_000);
    limits.max_alloc = Some(1024 * 1024 * 1024);
    reader.limits(limits);
    reader
}

fn read_header(bytes: &[u8], kind: ImageKind) -> Result<Header, image::ImageError> {
    let mut decoder = reader(bytes, kind).into_decoder()?;
    let (width, height) = decoder.dimensions();
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let animated = match kind {
        ImageKind::Png => is_apng(bytes),
        ImageKind::Gif => image::codecs::gif::GifDecoder::new(Cursor::new(bytes))
            .is_ok_and(|decoder| decoder.into_frames().take(2).count() > 1),
        ImageKind::Webp => image::codecs::webp::WebPDecoder::new(Cursor::new(bytes))
            .is_ok_and(|decoder| decoder.has_animation()),
        ImageKind::Jpeg | ImageKind::Bmp => false,
    };
    let (width, height) = if swaps_axes(orientation) {
        (height, width)
    } else {
        (width, height)
    };
    Ok(Header {
        width,
        height,
        orientation,
        animated,
    })
}

fn swaps_axes(orientation: image::metadata::Orientation) -> bool {
    use image::metadata::Orientation::{Rotate90, Rotate90FlipH, Rotate270, Rotate270FlipH};
    matches!(
        orientation,
        Rotate90 | Rotate270 | Rotate90FlipH | Rotate270FlipH
    )
}

fn base64_len(bytes: usize) -> usize {
    bytes.div_ceil(3) * 4
}

/// Checks the image in `bytes` (of format `kind`) against `config` and returns what to send.
pub fn process_image(bytes: &[u8], kind: ImageKind, config: &ImageConfig) -> ImageOutcome {
    let first_line = |mime: &str| format!("Read image file [{mime}]");
    let undecodable = |error: &dyn std::fmt::Display| ImageOutcome::Omitted {
        text: format!(
            "{}\n[Image omitted: the file could not be decoded as {} ({}).]",
            first_line(kind.mime()),
            kind.name(),
            one_line(&error.to_string())
        ),
    };
    let header = match read_header(bytes, kind) {
        Ok(header) => header,
        Err(error) => {
            return undecodable(&error);
        }
    };
    // Decoded even when it will pass through: a file whose header is fine but whose data is
    // broken must never reach a provider, which would refuse it on every later request.
    let mut image = match reader(bytes, kind).decode() {
        Ok(image) => image,
        Err(error) => {
            return undecodable(&error);
        }
    };
    let fits = header.width <= config.max_width
        && header.height <= config.max_height
        && base64_len(bytes.len()) <= config.max_base64_bytes;
    if fits && config.accepted.contains(&kind) {
        return ImageOutcome::Image {
            text: first_line(kind.mime()),
            data: BASE64.encode(bytes),
            mime: kind.mime(),
            original: (header.width, header.height),
            displayed: (header.width, header.height),
            converted: false,
        };
    }
    image.apply_orientation(header.orientation);
    let original = (image.width(), image.height());
    let Some(encoded) = fit_and_encode(&image, config) else {
        return ImageOutcome::Omitted {
            text: format!(
                "{}\n[Image omitted: could not be resized below the inline image size limit ({}x{} \
                 px, {} of base64).]",
                first_line(kind.mime()),
                config.max_width,
                config.max_height,
                jig_truncate::format_size(config.max_base64_bytes)
            ),
        };
    };
    let mut text = first_line(encoded.mime);
    if encoded.mime != kind.mime() {
        let _ = write!(
            text,
            "\n[Image converted from {} to {}.]",
            kind.mime(),
            encoded.mime
        );
    }
    if header.animated {
        text.push_str("\n[Animated image: only the first frame is shown.]");
    }
    if encoded.size != original {
        let scale = f64::from(original.0) / f64::from(encoded.size.0);
        let _ = write!(
            text,
            "\n[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {scale:.2} to \
             map to original image.]",
            original.0, original.1, encoded.size.0, encoded.size.1
        );
    }
    ImageOutcome::Image {
        text,
        data: BASE64.encode(&encoded.bytes),
        mime: encoded.mime,
        original,
        displayed: encoded.size,
        converted: true,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches('.')
        .to_owned()
}

struct Encoded {
    bytes: Vec<u8>,
    mime: &'static str,
    size: (u32, u32),
}

/// Scales `image` into the configured box and encodes it as the smallest acceptable candidate;
/// when none fits the byte budget, scales down by 3/4 and tries again.
fn fit_and_encode(image: &DynamicImage, config: &ImageConfig) -> Option<Encoded> {
    let (mut width, mut height) = fit_within(image.width(), image.height(), config);
    loop {
        let scaled = if (width, height) == (image.width(), image.height()) {
            image.clone()
        } else {
            image.resize_exact(width, height, FilterType::Lanczos3)
        };
        if let Some(encoded) = smallest_encoding(&scaled, config) {
            return Some(encoded);
        }
        if width == 1 && height == 1 {
            return None;
        }
        let next = (shrink(width), shrink(height));
        if next == (width, height) {
            return None;
        }
        (width, height) = next;
    }
}

/// Three quarters of `side`, at least 1.
fn shrink(side: u32) -> u32 {
    u32::try_from(u64::from(side) * 3 / 4)
        .unwrap_or(side)
        .max(1)
}

/// The largest size with the image's aspect ratio inside the configured box (integer
/// arithmetic, rounded to the nearest pixel, each side at least 1).
fn fit_within(width: u32, height: u32, config: &ImageConfig) -> (u32, u32) {
    if width <= config.max_width && height <= config.max_height {
        return (width, height);
    }
    let (w, h) = (u64::from(width), u64::from(height));
    let (max_w, max_h) = (u64::from(config.max_width), u64::from(config.max_height));
    // Rounded `numerator / denominator`.
    let scaled = |numerator: u64, denominator: u64| {
        u32::try_from((2 * numerator + denominator) / (2 * denominator))
            .unwrap_or(u32::MAX)
            .max(1)
    };
    if w * max_h >= h * max_w {
        (
            config.max_width,
            scaled(h * max_w, w).min(config.max_height),
        )
    } else {
        (
            scaled(w * max_h, h).min(config.max_width),
            config.max_height,
        )
    }
}

/// PNG, and JPEG at each configured quality (only for opaque images: JPEG has no alpha); the
/// smallest whose base64 fits wins.
fn smallest_encoding(image: &DynamicImage, config: &ImageConfig) -> Option<Encoded> {
    let size = (image.width(), image.height());
    let mut best: Option<Encoded> = None;
    let mut consider = |bytes: Vec<u8>, mime: &'static str| {
        if base64_len(bytes.len()) <= config.max_base64_bytes
            && best
                .as_ref()
                .is_none_or(|best| bytes.len() < best.bytes.len())
        {
            best = Some(Encoded { bytes, mime, size });
        }
    };
    if let Some(png) = encode_png(image) {
        consider(png, "image/png");
    }
    if is_opaque(image) {
        let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
        for &quality in &config.jpeg_qualities {
            if let Some(jpeg) = encode_jpeg(&rgb, quality) {
                let fits = base64_len(jpeg.len()) <= config.max_base64_bytes;
                consider(jpeg, "image/jpeg");
                // Lower qualities only help when this one did not fit.
                if fits {
                    break;
                }
            }
        }
    }
    best
}

fn is_opaque(image: &DynamicImage) -> bool {
    if !image.color().has_alpha() {
        return true;
    }
    image.to_rgba8().pixels().all(|pixel| pixel.0[3] == u8::MAX)
}

fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let encoder =
        PngEncoder::new_with_quality(&mut out, CompressionType::Default, PngFilter::Adaptive);
    let image = match image {
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_) => image.clone(),
        other if other.color().has_alpha() => DynamicImage::ImageRgba8(other.to_rgba8()),
        other => DynamicImage::ImageRgb8(other.to_rgb8()),
    };
    write_with(encoder, &image)?;
    Some(out)
}

fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    write_with(JpegEncoder::new_with_quality(&mut out, quality), image)?;
    Some(out)
}

/// Encodes `image`'s pixels with `encoder`; `None` when the encoder refuses them.
fn write_with(encoder: impl ImageEncoder, image: &DynamicImage) -> Option<()> {
    encoder
        .write_image(
            image.as_bytes(),
            image.width(),
            image.height(),
            image.color().into(),
        )
        .ok()
}

/// Files larger than this are not decoded (the text says so).
const MAX_IMAGE_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// `read`'s answer for a file whose first bytes are an image of format `kind`: the whole file is
/// read through the env and processed on a blocking thread.
pub(crate) async fn read_image(
    ctx: &ToolContext,
    path: &ResolvedPath,
    size: u64,
    kind: ImageKind,
    config: &ImageConfig,
) -> Result<ToolOutput<ReadDetails>, ToolError> {
    if size > MAX_IMAGE_FILE_BYTES {
        let text = format!(
            "Read image file [{}]\n[Image omitted: the file is {}, too large to process.]",
            kind.mime(),
            jig_truncate::format_size(usize::try_from(size).unwrap_or(usize::MAX))
        );
        return Ok(ImageOutcome::Omitted { text }.into_output(size));
    }
    let files = ctx.files_for_reading()?;
    let bytes = tokio::select! {
        bytes = files.read(&path.absolute) => bytes,
        () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    let bytes = bytes.map_err(|error| failure::at_path(Action::Read, path, &error))?;
    let config = config.clone();
    let work = tokio::task::spawn_blocking(move || process_image(&bytes, kind, &config));
    let outcome = tokio::select! {
        outcome = work => outcome,
        () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    let outcome = outcome.unwrap_or_else(|_| ImageOutcome::Omitted {
        text: format!(
            "Read image file [{}]\n[Image omitted: processing the image failed.]",
            kind.mime()
        ),
    });
    Ok(outcome.into_output(size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_uses_magic_bytes() {
        assert_eq!(
            sniff_image(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0]),
            Some(ImageKind::Jpeg)
        );
        assert_eq!(sniff_image(&[0xFF, 0xD8, 0xFF, 0xF7, 0, 0]), None);
        assert_eq!(sniff_image(b"GIF89a...."), Some(ImageKind::Gif));
        assert_eq!(sniff_image(b"RIFF\0\0\0\0WEBPVP8 "), Some(ImageKind::Webp));
        assert_eq!(sniff_image(b"hello world, not an image"), None);
        assert_eq!(sniff_image(b"BM not really a bitmap header"), None);
    }

    #[test]
    fn fit_within_keeps_the_aspect_ratio() {
        let config = ImageConfig::default();
        assert_eq!(fit_within(4000, 1000, &config), (2000, 500));
        assert_eq!(fit_within(1000, 3000, &config), (667, 2000));
        assert_eq!(fit_within(10, 10, &config), (10, 10));
        assert_eq!(fit_within(100_000, 1, &config), (2000, 1));
    }

    #[test]
    fn apng_is_detected_before_idat() {
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        png.extend([0, 0, 0, 13]);
        png.extend(b"IHDR");
        png.extend([0; 13 + 4]);
        png.extend([0, 0, 0, 8]);
        png.extend(b"acTL");
        png.extend([0; 8 + 4]);
        assert!(is_apng(&png));
        assert_eq!(sniff_image(&png), Some(ImageKind::Png));
    }
}
