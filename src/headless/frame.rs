//! Snapshots of a rendered ratatui [`Buffer`]: plain text, a terminal-screenshot SVG and a
//! stable content hash.

use std::borrow::Cow;
use std::fmt::{self, Write as _};

use ratatui::buffer::{Buffer, Cell, CellDiffOption, CellWidth};
use ratatui::style::{Color, Modifier};

const CELL_WIDTH: f64 = 8.4;
const ROW_HEIGHT: f64 = 17.0;
const FONT_SIZE: u32 = 14;
const FONT_FAMILY: &str = "DejaVu Sans Mono, Menlo, Consolas, monospace";
/// Distance from the top of a row to the text baseline.
const BASELINE: f64 = 13.0;
const PADDING: f64 = 12.0;
const TITLE_BAR_HEIGHT: f64 = 32.0;
const CORNER_RADIUS: f64 = 8.0;
/// Room kept free on each side of the title for the three window dots.
const TITLE_SIDE_RESERVE: f64 = 72.0;

const DEFAULT_BG: Rgb = Rgb(0x1e, 0x1e, 0x2e);
const DEFAULT_FG: Rgb = Rgb(0xcd, 0xd6, 0xf4);
const TITLE_BAR_BG: Rgb = Rgb(0x18, 0x18, 0x25);
const WINDOW_BORDER: Rgb = Rgb(0x31, 0x32, 0x44);
const TITLE_FG: Rgb = Rgb(0xa6, 0xad, 0xc8);
const DOTS: [Rgb; 3] = [
    Rgb(0xf3, 0x8b, 0xa8),
    Rgb(0xf9, 0xe2, 0xaf),
    Rgb(0xa6, 0xe3, 0xa1),
];

/// ANSI colours 0-15, used for the named colours and for `Indexed(0..16)`.
const ANSI: [Rgb; 16] = [
    Rgb(0x45, 0x47, 0x5a), // black
    Rgb(0xf3, 0x8b, 0xa8), // red
    Rgb(0xa6, 0xe3, 0xa1), // green
    Rgb(0xf9, 0xe2, 0xaf), // yellow
    Rgb(0x89, 0xb4, 0xfa), // blue
    Rgb(0xcb, 0xa6, 0xf7), // magenta
    Rgb(0x94, 0xe2, 0xd5), // cyan
    Rgb(0xba, 0xc2, 0xde), // gray (white)
    Rgb(0x58, 0x5b, 0x70), // dark gray (bright black)
    Rgb(0xf7, 0xa8, 0xbf), // light red
    Rgb(0xbd, 0xf2, 0xb8), // light green
    Rgb(0xfc, 0xef, 0xc7), // light yellow
    Rgb(0xa9, 0xc8, 0xfc), // light blue
    Rgb(0xdc, 0xc3, 0xfa), // light magenta
    Rgb(0xb5, 0xed, 0xe4), // light cyan
    Rgb(0xf5, 0xf7, 0xff), // white (bright white)
];

const CUBE_LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// One line per row with trailing spaces trimmed, each ended by '\n'. The cells covered by a
/// wide character add nothing.
pub fn to_text(buffer: &Buffer) -> String {
    let mut out = String::new();
    for row in rows(buffer) {
        let start = out.len();
        for glyph in glyphs(row) {
            out.push_str(&glyph.text);
        }
        let trimmed = out[start..].trim_end_matches(' ').len();
        out.truncate(start + trimmed);
        out.push('\n');
    }
    out
}

/// A standalone SVG document that looks like a screenshot of a terminal window titled `title`.
pub fn to_svg(buffer: &Buffer, title: &str) -> String {
    let title = sanitize(title);
    let cols = f64::from(buffer.area.width);
    let grid_width = cols * CELL_WIDTH;
    let title_width = f64::from(title.cell_width()) * CELL_WIDTH;
    let width = (grid_width + 2.0 * PADDING).max(title_width + 2.0 * TITLE_SIDE_RESERVE);
    let height = TITLE_BAR_HEIGHT + f64::from(buffer.area.height) * ROW_HEIGHT + 2.0 * PADDING;
    let title = Escaped(&title);

    let mut svg = String::new();
    // Writing into a String cannot fail.
    let _ = write_svg(&mut svg, buffer, title, width, height);
    svg
}

fn write_svg(
    svg: &mut String,
    buffer: &Buffer,
    title: Escaped<'_>,
    width: f64,
    height: f64,
) -> fmt::Result {
    let r = CORNER_RADIUS;
    let bar = TITLE_BAR_HEIGHT;
    writeln!(svg, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.1}" height="{height:.1}" viewBox="0 0 {width:.1} {height:.1}" font-family="{FONT_FAMILY}" font-size="{FONT_SIZE}">"#
    )?;
    writeln!(svg, "<title>{title}</title>")?;
    writeln!(
        svg,
        r#"<rect x="0.5" y="0.5" width="{:.1}" height="{:.1}" rx="{r:.1}" fill="{DEFAULT_BG}"/>"#,
        width - 1.0,
        height - 1.0,
    )?;
    writeln!(
        svg,
        r#"<path d="M0.5 {bar:.1}V{:.1}A{r:.1} {r:.1} 0 0 1 {:.1} 0.5H{:.1}A{r:.1} {r:.1} 0 0 1 {:.1} {:.1}V{bar:.1}Z" fill="{TITLE_BAR_BG}"/>"#,
        r + 0.5,
        r + 0.5,
        width - r - 0.5,
        width - 0.5,
        r + 0.5,
    )?;
    for (i, colour) in DOTS.iter().enumerate() {
        writeln!(
            svg,
            r#"<circle cx="{:.1}" cy="{:.1}" r="6.0" fill="{colour}"/>"#,
            20.0 + 20.0 * i as f64,
            bar / 2.0,
        )?;
    }
    writeln!(
        svg,
        r#"<rect x="0.5" y="0.5" width="{:.1}" height="{:.1}" rx="{r:.1}" fill="none" stroke="{WINDOW_BORDER}"/>"#,
        width - 1.0,
        height - 1.0,
    )?;
    writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{TITLE_FG}" xml:space="preserve">{title}</text>"#,
        width / 2.0,
        bar / 2.0 + 5.0,
    )?;

    writeln!(svg, r#"<g fill="{DEFAULT_FG}" xml:space="preserve">"#)?;
    for (y, row) in rows(buffer).enumerate() {
        let top = bar + PADDING + y as f64 * ROW_HEIGHT;
        let cells = glyphs(row);
        write_backgrounds(svg, &cells, top)?;
        write_texts(svg, &cells, top + BASELINE)?;
    }
    writeln!(svg, "</g>")?;
    writeln!(svg, "</svg>")
}

fn write_backgrounds(svg: &mut String, cells: &[Glyph<'_>], top: f64) -> fmt::Result {
    let mut i = 0;
    while i < cells.len() {
        let bg = resolve(cells[i].cell).1;
        let mut end = i + 1;
        while end < cells.len() && resolve(cells[end].cell).1 == bg {
            end += 1;
        }
        if bg != DEFAULT_BG {
            let first = &cells[i];
            let columns: usize = cells[i..end].iter().map(|g| g.width).sum();
            writeln!(
                svg,
                r#"<rect x="{:.1}" y="{top:.1}" width="{:.1}" height="{ROW_HEIGHT:.1}" fill="{bg}" shape-rendering="crispEdges"/>"#,
                column_x(first.col),
                columns as f64 * CELL_WIDTH,
            )?;
        }
        i = end;
    }
    Ok(())
}

fn write_texts(svg: &mut String, cells: &[Glyph<'_>], baseline: f64) -> fmt::Result {
    let mut i = 0;
    while i < cells.len() {
        let style = resolve(cells[i].cell).0;
        // A wide glyph gets an element of its own so that it is stretched onto exactly its
        // columns and cannot shift its neighbours off the grid.
        let mut end = i + 1;
        if cells[i].width == 1 {
            while end < cells.len() && cells[end].width == 1 && resolve(cells[end].cell).0 == style
            {
                end += 1;
            }
        }
        write_run(svg, &cells[i..end], style, baseline)?;
        i = end;
    }
    Ok(())
}

fn write_run(svg: &mut String, run: &[Glyph<'_>], style: TextStyle, baseline: f64) -> fmt::Result {
    if style.hidden {
        return Ok(());
    }
    let run = if style.underline || style.strike {
        run
    } else {
        let is_blank = |g: &Glyph<'_>| g.text == " ";
        let start = run.iter().position(|g| !is_blank(g)).unwrap_or(run.len());
        let end = run
            .iter()
            .rposition(|g| !is_blank(g))
            .map_or(start, |e| e + 1);
        &run[start..end]
    };
    let Some(first) = run.first() else {
        return Ok(());
    };
    let columns: usize = run.iter().map(|g| g.width).sum();
    write!(
        svg,
        r#"<text x="{:.1}" y="{baseline:.1}" textLength="{:.1}" lengthAdjust="spacingAndGlyphs""#,
        column_x(first.col),
        columns as f64 * CELL_WIDTH,
    )?;
    if style.fg != DEFAULT_FG {
        write!(svg, r#" fill="{}""#, style.fg)?;
    }
    if style.bold {
        svg.push_str(r#" font-weight="bold""#);
    }
    if style.italic {
        svg.push_str(r#" font-style="italic""#);
    }
    match (style.underline, style.strike) {
        (true, true) => svg.push_str(r#" text-decoration="underline line-through""#),
        (true, false) => svg.push_str(r#" text-decoration="underline""#),
        (false, true) => svg.push_str(r#" text-decoration="line-through""#),
        (false, false) => {}
    }
    if style.dim {
        svg.push_str(r#" opacity="0.6""#);
    }
    svg.push('>');
    for glyph in run {
        write!(svg, "{}", Escaped(&glyph.text))?;
    }
    writeln!(svg, "</text>")
}

fn column_x(col: usize) -> f64 {
    PADDING + col as f64 * CELL_WIDTH
}

/// FNV-1a 64 over the size and every cell's symbol, fg, bg and modifiers, as 16 lowercase hex
/// digits; stable across runs and platforms.
pub fn hash(buffer: &Buffer) -> String {
    let mut h = Fnv1a::new();
    h.write(&buffer.area.width.to_le_bytes());
    h.write(&buffer.area.height.to_le_bytes());
    for cell in &buffer.content {
        h.write(cell.symbol().as_bytes());
        // 0xff never occurs in UTF-8, so it cleanly terminates the symbol.
        h.write(&[0xff]);
        hash_color(&mut h, cell.fg);
        hash_color(&mut h, cell.bg);
        h.write(&cell.modifier.bits().to_le_bytes());
    }
    format!("{:016x}", h.0)
}

fn hash_color(h: &mut Fnv1a, color: Color) {
    match color {
        Color::Rgb(r, g, b) => h.write(&[17, r, g, b]),
        Color::Indexed(n) => h.write(&[18, n]),
        named => h.write(&[named_index(named).map_or(0, |i| i + 1)]),
    }
}

struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn rows(buffer: &Buffer) -> impl Iterator<Item = &[Cell]> {
    let width = usize::from(buffer.area.width);
    (0..usize::from(buffer.area.height)).map(move |y| {
        buffer
            .content
            .get(y * width..(y + 1) * width)
            .unwrap_or(&[])
    })
}

/// A cell that is actually drawn: trailing cells covered by a wide glyph are left out.
struct Glyph<'a> {
    col: usize,
    width: usize,
    text: Cow<'a, str>,
    cell: &'a Cell,
}

fn glyphs(row: &[Cell]) -> Vec<Glyph<'_>> {
    let mut out = Vec::with_capacity(row.len());
    let mut next_free = 0;
    for (col, cell) in row.iter().enumerate() {
        if col < next_free {
            continue;
        }
        let text = match cell.symbol() {
            "" => Cow::Borrowed(" "),
            symbol => sanitize(symbol),
        };
        let width = match cell.diff_option {
            CellDiffOption::ForcedWidth(w) => usize::from(w.get()),
            _ if text.len() == 1 => 1,
            _ => usize::from(text.cell_width()).max(1),
        }
        .min(row.len() - col);
        next_free = col + width;
        out.push(Glyph {
            col,
            width,
            text,
            cell,
        });
    }
    out
}

/// Replaces characters that XML 1.0 forbids, or that would break the line structure of the
/// text output, with U+FFFD.
fn sanitize(s: &str) -> Cow<'_, str> {
    let bad =
        |c: char| crate::redact::is_terminal_unsafe(c) || matches!(c, '\u{fffe}' | '\u{ffff}');
    if s.contains(bad) {
        Cow::Owned(
            s.chars()
                .map(|c| if bad(c) { '\u{fffd}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
            f.write_str(&rest[..i])?;
            f.write_str(match rest.as_bytes()[i] {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => "&apos;",
            })?;
            rest = &rest[i + 1..];
        }
        f.write_str(rest)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Rgb(u8, u8, u8);

impl fmt::Display for Rgb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct TextStyle {
    fg: Rgb,
    bold: bool,
    italic: bool,
    underline: bool,
    strike: bool,
    dim: bool,
    hidden: bool,
}

/// The text style and background colour a cell is drawn with.
fn resolve(cell: &Cell) -> (TextStyle, Rgb) {
    let m = cell.modifier;
    let mut fg = rgb(cell.fg).unwrap_or(DEFAULT_FG);
    let mut bg = rgb(cell.bg).unwrap_or(DEFAULT_BG);
    if m.contains(Modifier::REVERSED) {
        std::mem::swap(&mut fg, &mut bg);
    }
    let style = TextStyle {
        fg,
        bold: m.contains(Modifier::BOLD),
        italic: m.contains(Modifier::ITALIC),
        underline: m.contains(Modifier::UNDERLINED),
        strike: m.contains(Modifier::CROSSED_OUT),
        dim: m.contains(Modifier::DIM),
        hidden: m.contains(Modifier::HIDDEN),
    };
    (style, bg)
}

/// `None` for [`Color::Reset`], which means the default colour of whichever layer it is on.
fn rgb(color: Color) -> Option<Rgb> {
    match color {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some(Rgb(r, g, b)),
        Color::Indexed(n) => Some(xterm(n)),
        named => named_index(named).map(|i| ANSI[usize::from(i)]),
    }
}

fn named_index(color: Color) -> Option<u8> {
    Some(match color {
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        Color::Reset | Color::Rgb(..) | Color::Indexed(_) => return None,
    })
}

fn xterm(n: u8) -> Rgb {
    match n {
        0..16 => ANSI[usize::from(n)],
        16..232 => {
            let i = usize::from(n - 16);
            Rgb(
                CUBE_LEVELS[i / 36],
                CUBE_LEVELS[i / 6 % 6],
                CUBE_LEVELS[i % 6],
            )
        }
        _ => {
            let v = 8 + 10 * (n - 232);
            Rgb(v, v, v)
        }
    }
}

#[cfg(test)]
mod tests {
    use quick_xml::Reader;
    use quick_xml::events::{BytesStart, Event};
    use ratatui::layout::Rect;
    use ratatui::style::Style;

    use super::*;

    fn buffer(width: u16, height: u16) -> Buffer {
        Buffer::empty(Rect::new(0, 0, width, height))
    }

    fn assert_xml_chars(s: &str) {
        let legal = |c: char| {
            matches!(c, '\t' | '\n' | '\r')
                || ('\u{20}'..='\u{d7ff}').contains(&c)
                || ('\u{e000}'..='\u{fffd}').contains(&c)
                || c >= '\u{10000}'
        };
        assert!(s.chars().all(legal), "illegal XML 1.0 character in {s:?}");
    }

    fn assert_known_entity(name: &str) {
        assert!(
            ["amp", "lt", "gt", "quot", "apos"].contains(&name),
            "unknown entity &{name};"
        );
    }

    fn assert_attributes(e: &BytesStart<'_>) {
        for attr in e.attributes() {
            let attr = attr.expect("well-formed attribute");
            assert!(!attr.value.contains('<'), "raw < in attribute");
            for part in attr.value.split('&').skip(1) {
                let (name, _) = part.split_once(';').expect("terminated entity");
                assert_known_entity(name);
            }
        }
    }

    /// Parses the whole document, failing on any syntax error, unbalanced tag, malformed
    /// attribute, unknown entity or illegal character; also checks for a single root element.
    fn assert_well_formed(svg: &str) {
        assert_xml_chars(svg);
        let mut reader = Reader::from_str(svg);
        let mut depth = 0usize;
        let mut roots = 0;
        loop {
            match reader.read_event() {
                Ok(Event::Start(e)) => {
                    if depth == 0 {
                        roots += 1;
                    }
                    depth += 1;
                    assert_attributes(&e);
                }
                Ok(Event::Empty(e)) => {
                    assert!(depth > 0, "element outside the root");
                    assert_attributes(&e);
                }
                Ok(Event::End(_)) => depth -= 1,
                Ok(Event::Text(t)) => {
                    assert!(depth > 0 || t.trim().is_empty(), "text outside the root");
                }
                Ok(Event::GeneralRef(r)) => assert_known_entity(&r),
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(e) => panic!("not well-formed at {}: {e}\n{svg}", reader.error_position()),
            }
        }
        assert_eq!(depth, 0, "unclosed elements");
        assert_eq!(roots, 1, "exactly one root element");
    }

    #[test]
    fn text_skips_wide_trailing_cell_and_trims() {
        let mut buf = buffer(10, 3);
        buf.set_string(0, 0, "a中b", Style::default());
        buf.set_string(2, 1, "x  ", Style::default().bg(Color::Red));
        assert_eq!(buf[(1, 0)].symbol(), "中");
        assert_eq!(to_text(&buf), "a中b\n  x\n\n");
    }

    #[test]
    fn text_of_explicit_empty_and_control_symbols() {
        let mut buf = buffer(4, 1);
        buf[(0, 0)].set_symbol("");
        buf[(1, 0)].set_symbol("\n");
        buf[(2, 0)].set_symbol("z");
        assert_eq!(to_text(&buf), " \u{fffd}z\n");
    }

    #[test]
    fn svg_is_well_formed_and_has_frame() {
        let mut buf = buffer(20, 4);
        buf.set_string(0, 0, "hello 世界 🦀 ok", Style::default().fg(Color::Green));
        buf.set_string(0, 2, "  spaced  out  ", Style::default());
        let svg = to_svg(&buf, "strata demo");
        assert_well_formed(&svg);
        assert!(svg.contains(FONT_FAMILY));
        assert!(svg.contains(r#"font-size="14""#));
        assert!(svg.contains(r#"xml:space="preserve""#));
        assert!(svg.contains(">strata demo</text>"));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.contains(&DEFAULT_BG.to_string()));
        assert!(svg.contains(r#"lengthAdjust="spacingAndGlyphs""#));
    }

    #[test]
    fn svg_places_runs_on_the_grid_after_wide_chars() {
        let mut buf = buffer(10, 1);
        buf.set_string(0, 0, "中x", Style::default());
        buf.set_string(3, 0, "y", Style::default().fg(Color::Red));
        let svg = to_svg(&buf, "t");
        // 中 covers columns 0-1, x is column 2, y column 3.
        let x0 = format!(r#"x="{:.1}""#, PADDING);
        let x2 = format!(r#"x="{:.1}""#, PADDING + 2.0 * CELL_WIDTH);
        let x3 = format!(r#"x="{:.1}""#, PADDING + 3.0 * CELL_WIDTH);
        assert!(svg.contains(&format!(
            r#"<text {x0} y="{:.1}" textLength="{:.1}""#,
            TITLE_BAR_HEIGHT + PADDING + BASELINE,
            2.0 * CELL_WIDTH
        )));
        assert!(svg.contains(&format!(r#"<text {x2} "#)));
        assert!(svg.contains(&format!(r#"<text {x3} "#)));
        assert!(svg.contains(">中</text>"));
        assert!(svg.contains(">x</text>"));
    }

    #[test]
    fn default_blank_runs_emit_nothing() {
        let buf = buffer(30, 5);
        let svg = to_svg(&buf, "empty");
        assert_well_formed(&svg);
        assert_eq!(svg.matches("<text").count(), 1, "only the title");
        assert_eq!(
            svg.matches("<rect").count(),
            2,
            "only the window and its outline"
        );
    }

    #[test]
    fn colours_appear_as_hex() {
        let mut buf = buffer(10, 1);
        buf.set_string(0, 0, "a", Style::default().fg(Color::Rgb(0x12, 0xab, 0xef)));
        buf.set_string(1, 0, "b", Style::default().fg(Color::Indexed(196)));
        buf.set_string(2, 0, "c", Style::default().fg(Color::Indexed(244)));
        buf.set_string(3, 0, "d", Style::default().fg(Color::Blue));
        buf.set_string(4, 0, "e", Style::default().bg(Color::Indexed(21)));
        buf.set_string(5, 0, "f", Style::default().fg(Color::Indexed(4)));
        let svg = to_svg(&buf, "colours");
        assert_well_formed(&svg);
        assert!(svg.contains(r##"fill="#12abef""##));
        assert!(svg.contains(r##"fill="#ff0000""##));
        assert!(svg.contains(r##"fill="#808080""##));
        assert!(svg.contains(&format!(r#"fill="{}""#, ANSI[4])));
        assert!(svg.contains(&format!(
            r##"<rect x="{:.1}" y="44.0" width="8.4" height="17.0" fill="#0000ff""##,
            PADDING + 4.0 * CELL_WIDTH
        )));
        assert_eq!(rgb(Color::Indexed(4)), rgb(Color::Blue));
        assert_eq!(rgb(Color::Reset), None);
    }

    #[test]
    fn xterm_palette_edges() {
        assert_eq!(xterm(16), Rgb(0, 0, 0));
        assert_eq!(xterm(231), Rgb(255, 255, 255));
        assert_eq!(xterm(67), Rgb(95, 135, 175));
        assert_eq!(xterm(232), Rgb(8, 8, 8));
        assert_eq!(xterm(255), Rgb(238, 238, 238));
    }

    #[test]
    fn modifiers_become_attributes() {
        let mut buf = buffer(12, 1);
        let s = Style::default();
        buf.set_string(0, 0, "B", s.add_modifier(Modifier::BOLD));
        buf.set_string(1, 0, "I", s.add_modifier(Modifier::ITALIC));
        buf.set_string(2, 0, "U", s.add_modifier(Modifier::UNDERLINED));
        buf.set_string(3, 0, "S", s.add_modifier(Modifier::CROSSED_OUT));
        buf.set_string(4, 0, "D", s.add_modifier(Modifier::DIM));
        buf.set_string(5, 0, "R", s.add_modifier(Modifier::REVERSED));
        buf.set_string(6, 0, "H", s.add_modifier(Modifier::HIDDEN));
        let svg = to_svg(&buf, "mods");
        assert_well_formed(&svg);
        assert!(svg.contains(r#"font-weight="bold">B<"#));
        assert!(svg.contains(r#"font-style="italic">I<"#));
        assert!(svg.contains(r#"text-decoration="underline">U<"#));
        assert!(svg.contains(r#"text-decoration="line-through">S<"#));
        assert!(svg.contains(r#"opacity="0.6">D<"#));
        // Reversed: default fg becomes the background, default bg the text colour.
        assert!(svg.contains(&format!(r#"fill="{DEFAULT_BG}">R<"#)));
        assert!(svg.contains(&format!(
            r#"<rect x="{:.1}" y="44.0" width="8.4" height="17.0" fill="{DEFAULT_FG}""#,
            PADDING + 5.0 * CELL_WIDTH
        )));
        assert!(!svg.contains(">H<"));
    }

    #[test]
    fn hostile_text_is_escaped() {
        let mut buf = buffer(30, 2);
        let hostile = r#"<script>&"'"#;
        buf.set_string(0, 0, hostile, Style::default().fg(Color::Red));
        buf[(0, 1)].set_symbol("\u{1b}");
        buf[(1, 1)].set_symbol("\u{0}");
        let svg = to_svg(&buf, "</title><script>&\"'\u{7}");
        assert_well_formed(&svg);
        assert!(!svg.contains("<script"));
        assert!(svg.contains("&lt;script&gt;&amp;&quot;&apos;"));
        assert!(
            svg.contains("<title>&lt;/title&gt;&lt;script&gt;&amp;&quot;&apos;\u{fffd}</title>")
        );
        assert!(svg.contains(">\u{fffd}\u{fffd}</text>"));
        assert!(!svg.contains('\u{1b}') && !svg.contains('\u{0}') && !svg.contains('\u{7}'));
    }

    #[test]
    fn hash_tracks_content() {
        let mut a = buffer(8, 2);
        a.set_string(0, 0, "abc", Style::default().fg(Color::Red));
        let b = a.clone();
        assert_eq!(hash(&a), hash(&b));
        let h = hash(&a);
        assert_eq!(h.len(), 16);
        assert!(
            h.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );

        let mut c = a.clone();
        c[(1, 0)].set_fg(Color::Rgb(0xf3, 0x8b, 0xa8));
        assert_ne!(
            hash(&a),
            hash(&c),
            "Rgb equal to the palette colour still differs"
        );
        let mut d = a.clone();
        d[(5, 1)].set_bg(Color::Indexed(1));
        assert_ne!(hash(&a), hash(&d));
        let mut e = a.clone();
        e[(0, 0)].modifier.insert(Modifier::BOLD);
        assert_ne!(hash(&a), hash(&e));
        assert_ne!(hash(&buffer(4, 2)), hash(&buffer(2, 4)));
    }

    #[test]
    fn hash_known_value() {
        let mut f = Fnv1a::new();
        f.write(b"a");
        assert_eq!(f.0, 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn output_is_deterministic() {
        let mut buf = buffer(16, 3);
        buf.set_string(
            1,
            1,
            "same 同じ",
            Style::default().fg(Color::Cyan).bg(Color::DarkGray),
        );
        assert_eq!(to_svg(&buf, "x"), to_svg(&buf.clone(), "x"));
        assert_eq!(to_text(&buf), to_text(&buf.clone()));
        assert_eq!(hash(&buf), hash(&buf.clone()));
    }

    #[test]
    fn zero_sized_buffers() {
        assert_eq!(to_text(&buffer(0, 2)), "\n\n");
        assert_eq!(to_text(&buffer(3, 0)), "");
        assert_well_formed(&to_svg(&buffer(0, 0), ""));
    }

    #[test]
    fn wide_char_in_last_column_is_clipped() {
        let mut buf = buffer(3, 1);
        buf[(2, 0)].set_symbol("中");
        assert_eq!(to_text(&buf), "  中\n");
        let svg = to_svg(&buf, "clip");
        assert!(svg.contains(&format!(
            r#"textLength="{CELL_WIDTH:.1}" lengthAdjust="spacingAndGlyphs">中<"#
        )));
    }
}
