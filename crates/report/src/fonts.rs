//! What the charts of every report share: the shipped font (DejaVu Sans,
//! registered with plotters so no system font is needed) and the palette.

use std::sync::Once;

use plotters::style::{register_font, FontStyle, RGBColor};

/// DejaVu Sans (see `crates/report/assets/DejaVuSans-LICENSE.txt`).
static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
/// The family the font is registered under and the SVG names.
pub(crate) const FAMILY: &str = "sans-serif";

/// Registers the shipped font with plotters (once per process).
pub(crate) fn ensure_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

/// Colors per client (red is kept for violations).
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xbc, 0xbd, 0x22),
];
