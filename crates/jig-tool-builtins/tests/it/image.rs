//! Images in `read`, with generated images: every format, limits on dimensions and bytes, BMP
//! conversion, EXIF orientation, animation, corrupt files and an image name on a text file.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_possible_truncation,
    reason = "test helpers fail loudly on broken fixtures; pixel values are taken modulo 256"
)]

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use image::codecs::gif::GifEncoder;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::webp::WebPEncoder;
use image::{
    Delay, DynamicImage, Frame, ImageEncoder, ImageFormat, Rgb, RgbImage, Rgba, RgbaImage,
};
use jig_env_memory::MemoryEnv;
use jig_tool::{ContentBlock, ToolContext, ToolResult};
use jig_tool_builtins::{BuiltinsConfig, ImageConfig, builtin_registry};
use pretty_assertions::assert_eq;
use serde_json::json;

const WS: &str = "/ws";

async fn read_with(config: ImageConfig, name: &str, bytes: &[u8]) -> ToolResult {
    let env = Arc::new(MemoryEnv::new());
    env.add_dir(WS).unwrap();
    env.add_file(Path::new(WS).join(name), bytes.to_vec())
        .unwrap();
    let ctx = ToolContext::new(env, PathBuf::from(WS));
    let mut builtins = BuiltinsConfig::default();
    builtins.read.image = config;
    let registry = builtin_registry(&builtins);
    let tool = registry.get("read").unwrap();
    let result = tool.run(&ctx, json!({"path": name})).await;
    crate::support::assert_details_conform(tool.as_ref(), &result);
    result
}

async fn read(name: &str, bytes: &[u8]) -> ToolResult {
    read_with(ImageConfig::default(), name, bytes).await
}

/// The text block and the image block (data decoded) of a result.
fn parts(result: &ToolResult) -> (String, Option<(String, Vec<u8>)>) {
    assert!(!result.is_error, "{result:?}");
    let text = result.content[0].as_text().expect("text first").to_owned();
    let image = result.content.iter().find_map(|block| match block {
        ContentBlock::Image { data, mime_type } => Some((
            mime_type.clone(),
            BASE64.decode(data).expect("valid base64"),
        )),
        ContentBlock::Text { .. } => None,
    });
    (text, image)
}

fn gradient(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x % 256) as u8, (y % 256) as u8, 128])
    })
}

/// Pseudo-random pixels: compresses badly, as photos do for PNG.
fn noise(width: u32, height: u32) -> RgbImage {
    let mut state = 0x2545_f491_u32;
    RgbImage::from_fn(width, height, |_, _| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let [a, b, c, _] = state.to_le_bytes();
        Rgb([a, b, c])
    })
}

fn encode(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, format).unwrap();
    out.into_inner()
}

fn dimensions(bytes: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(bytes).unwrap();
    (image.width(), image.height())
}

#[tokio::test]
async fn each_format_within_limits_passes_through_unchanged() {
    let picture = DynamicImage::ImageRgb8(gradient(64, 32));
    let mut webp = Vec::new();
    WebPEncoder::new_lossless(&mut webp)
        .write_image(picture.as_bytes(), 64, 32, picture.color().into())
        .unwrap();
    let cases = [
        ("a.png", encode(&picture, ImageFormat::Png), "image/png"),
        ("a.jpg", encode(&picture, ImageFormat::Jpeg), "image/jpeg"),
        ("a.gif", encode(&picture, ImageFormat::Gif), "image/gif"),
        ("a.webp", webp, "image/webp"),
    ];
    for (name, bytes, mime) in cases {
        let result = read(name, &bytes).await;
        let (text, image) = parts(&result);
        assert_eq!(text, format!("Read image file [{mime}]"));
        let (sent_mime, sent) = image.expect("an image block");
        assert_eq!(sent_mime, mime);
        assert_eq!(sent, bytes, "{name} must pass through byte for byte");
        assert_eq!(result.details["image"]["converted"], json!(false));
    }
}

#[tokio::test]
async fn detection_is_by_content_not_extension() {
    let png = encode(&DynamicImage::ImageRgb8(gradient(8, 8)), ImageFormat::Png);
    let (text, image) = parts(&read("picture.txt", &png).await);
    assert_eq!(text, "Read image file [image/png]");
    assert!(image.is_some());

    let result = read("fake.png", b"just some text, not an image\n").await;
    let (text, image) = parts(&result);
    assert!(image.is_none());
    assert!(text.contains("just some text, not an image"), "{text}");
}

#[tokio::test]
async fn oversized_dimensions_are_resized_keeping_the_aspect_ratio() {
    let png = encode(
        &DynamicImage::ImageRgb8(gradient(2400, 60)),
        ImageFormat::Png,
    );
    let result = read("wide.png", &png).await;
    let (text, image) = parts(&result);
    let (_, sent) = image.unwrap();
    assert_eq!(dimensions(&sent), (2000, 50));
    insta::assert_snapshot!("image_resized_default_limits", text);
    assert_eq!(result.details["image"]["width"], json!(2000));
    assert_eq!(result.details["image"]["originalWidth"], json!(2400));

    let config = ImageConfig::default().with_limits(200, 200, 4_718_592);
    let tall = encode(
        &DynamicImage::ImageRgb8(gradient(120, 600)),
        ImageFormat::Png,
    );
    let (text, image) = parts(&read_with(config, "tall.png", &tall).await);
    assert_eq!(dimensions(&image.unwrap().1), (40, 200));
    assert!(text.ends_with("[Image: original 120x600, displayed at 40x200. Multiply coordinates by 3.00 to map to original image.]"), "{text}");
}

#[tokio::test]
async fn oversized_bytes_are_reencoded_as_the_smaller_encoding() {
    let photo = DynamicImage::ImageRgb8(noise(300, 300));
    let png = encode(&photo, ImageFormat::Png);
    let limit = 120_000;
    assert!(
        png.len() * 4 / 3 > limit,
        "the test image must exceed the limit"
    );
    let config = ImageConfig::default().with_limits(2000, 2000, limit);
    let result = read_with(config, "photo.png", &png).await;
    let (text, image) = parts(&result);
    let (mime, sent) = image.unwrap();
    // A photo comes back as JPEG, not as a huge PNG.
    assert_eq!(mime, "image/jpeg");
    assert!(BASE64.encode(&sent).len() <= limit);
    assert!(
        text.starts_with(
            "Read image file [image/jpeg]\n[Image converted from image/png to image/jpeg.]"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn bmp_is_converted_to_the_smaller_of_png_and_jpeg() {
    let flat = DynamicImage::ImageRgb8(gradient(64, 64));
    let bmp = encode(&flat, ImageFormat::Bmp);
    let result = read("flat.bmp", &bmp).await;
    let (text, image) = parts(&result);
    let (mime, sent) = image.unwrap();
    assert_eq!(dimensions(&sent), (64, 64));
    let png_len = encode(&flat, ImageFormat::Png).len();
    let mut jpeg = Vec::new();
    JpegEncoder::new_with_quality(&mut jpeg, 80)
        .write_image(flat.as_bytes(), 64, 64, flat.color().into())
        .unwrap();
    let expected = if jpeg.len() < png_len {
        "image/jpeg"
    } else {
        "image/png"
    };
    assert_eq!(mime, expected);
    assert_eq!(
        text,
        format!("Read image file [{expected}]\n[Image converted from image/bmp to {expected}.]")
    );
}

#[tokio::test]
async fn transparent_images_are_never_turned_into_jpeg() {
    let transparent = DynamicImage::ImageRgba8(RgbaImage::from_fn(300, 300, |x, y| {
        Rgba([
            (x * 7 % 256) as u8,
            (y * 13 % 256) as u8,
            ((x ^ y) % 256) as u8,
            (x % 2 * 255) as u8,
        ])
    }));
    let png = encode(&transparent, ImageFormat::Png);
    let config = ImageConfig::default().with_limits(100, 100, 4_718_592);
    let (_, image) = parts(&read_with(config, "alpha.png", &png).await);
    assert_eq!(image.unwrap().0, "image/png");
}

/// A JPEG with an EXIF APP1 segment carrying `orientation`.
fn jpeg_with_orientation(image: &DynamicImage, orientation: u16) -> Vec<u8> {
    let mut exif = b"II*\0\x08\0\0\0".to_vec();
    exif.extend(1_u16.to_le_bytes()); // one IFD entry
    exif.extend(0x0112_u16.to_le_bytes()); // Orientation
    exif.extend(3_u16.to_le_bytes()); // SHORT
    exif.extend(1_u32.to_le_bytes()); // count
    exif.extend(u32::from(orientation).to_le_bytes());
    exif.extend(0_u32.to_le_bytes()); // no next IFD
    let mut out = Vec::new();
    let mut encoder = JpegEncoder::new_with_quality(&mut out, 90);
    encoder.set_exif_metadata(exif).unwrap();
    encoder
        .write_image(
            image.as_bytes(),
            image.width(),
            image.height(),
            image.color().into(),
        )
        .unwrap();
    out
}

#[tokio::test]
async fn exif_orientation_is_applied_when_the_image_is_processed() {
    let landscape = DynamicImage::ImageRgb8(gradient(400, 200));
    let jpeg = jpeg_with_orientation(&landscape, 6);
    let config = ImageConfig::default().with_limits(100, 100, 4_718_592);
    let result = read_with(config, "rotated.jpg", &jpeg).await;
    let (text, image) = parts(&result);
    // Orientation 6 = rotate 90°: the upright picture is 200 wide and 400 tall.
    assert_eq!(dimensions(&image.unwrap().1), (50, 100));
    assert!(
        text.contains("original 200x400, displayed at 50x100"),
        "{text}"
    );

    // Within the limits, the file passes through unchanged (its EXIF tag travels with it) and
    // the reported size is the upright one.
    let small = jpeg_with_orientation(&DynamicImage::ImageRgb8(gradient(40, 20)), 6);
    let result = read("small-rotated.jpg", &small).await;
    let (_, image) = parts(&result);
    assert_eq!(image.unwrap().1, small);
    assert_eq!(result.details["image"]["width"], json!(20));
    assert_eq!(result.details["image"]["height"], json!(40));
}

#[tokio::test]
async fn animated_gif_that_must_be_resized_becomes_its_first_frame() {
    let mut gif = Vec::new();
    {
        let mut encoder = GifEncoder::new(&mut gif);
        for shade in [0_u8, 255] {
            let frame = RgbaImage::from_pixel(300, 100, Rgba([shade, 0, 0, 255]));
            encoder
                .encode_frame(Frame::from_parts(
                    frame,
                    0,
                    0,
                    Delay::from_numer_denom_ms(100, 1),
                ))
                .unwrap();
        }
    }
    let config = ImageConfig::default().with_limits(150, 150, 4_718_592);
    let result = read_with(config, "anim.gif", &gif).await;
    let (text, image) = parts(&result);
    let (_, sent) = image.unwrap();
    assert_eq!(dimensions(&sent), (150, 50));
    let first = image::load_from_memory(&sent).unwrap().to_rgb8();
    assert!(
        first.get_pixel(10, 10).0[0] < 30,
        "the first (dark) frame is shown"
    );
    insta::assert_snapshot!("image_animated_first_frame", text);

    // Within the limits, the animation passes through untouched.
    let (_, image) = parts(&read("anim.gif", &gif).await);
    assert_eq!(image.unwrap().1, gif);
}

#[tokio::test]
async fn corrupt_images_become_text_never_an_image_block() {
    let mut png = encode(&DynamicImage::ImageRgb8(gradient(32, 32)), ImageFormat::Png);
    png.truncate(60);
    png.extend_from_slice(b"garbage garbage garbage");
    let result = read("broken.png", &png).await;
    let (text, image) = parts(&result);
    assert!(image.is_none());
    assert_eq!(result.content.len(), 1);
    insta::assert_snapshot!("image_corrupt_png", text);

    let mut jpeg = vec![0xFF, 0xD8, 0xFF, 0xE0];
    jpeg.extend_from_slice(&[0x13; 200]);
    let (text, image) = parts(&read("broken.jpg", &jpeg).await);
    assert!(image.is_none());
    assert!(
        text.starts_with(
            "Read image file [image/jpeg]\n[Image omitted: the file could not be decoded as JPEG"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn an_image_that_cannot_fit_is_omitted_with_a_reason() {
    let photo = DynamicImage::ImageRgb8(noise(64, 64));
    let png = encode(&photo, ImageFormat::Png);
    let config = ImageConfig::default().with_limits(2000, 2000, 8);
    let result = read_with(config, "tiny-budget.png", &png).await;
    let (text, image) = parts(&result);
    assert!(image.is_none());
    insta::assert_snapshot!("image_cannot_fit", text);
}
