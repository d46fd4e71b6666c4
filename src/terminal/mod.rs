//! Display-only terminal renderer for ACP `terminal_output_chunk` streams.
//!
//! Raw PTY bytes go through an incremental UTF-8 decoder and a DEC/ECMA-48 escape parser
//! ([`parser`]: Paul Williams' state machine, as in the `vte` crate) into a grid of cells with
//! interned styles, from which [`Terminal::text`], [`Terminal::lines`], [`Terminal::spans`],
//! [`Terminal::screen`] and [`Terminal::cursor`] are read. The pure-Python twin
//! (`python/acpwire/_pure/terminal.py`) implements every rule below identically.
//!
//! # Model
//! * `cols: None` is transcript mode: lines have no practical width limit (a row soft-wraps
//!   only past [`UNBOUNDED_COLS`] cells and every view joins soft-wrapped rows again), LF also
//!   returns to column 0 (output captured without a PTY has bare LFs), and cursor movement works
//!   within a window of `rows` lines at the bottom; lines scrolled above it go to scrollback.
//! * `cols: Some(n)` is a VT grid: LF moves down only and printing past the last column wraps.
//! * The cursor column may equal the width: the "pending wrap" state after the last column was
//!   written (as in xterm, vt100-rust and pyte); the next printable character wraps first. As
//!   in xterm (`ResetWrap`), LF/VT/FF, IND, RI, NEL, CUU/CUD/CNL/CPL, VPA/VPR, CUP/HVP, CHA,
//!   EL, ED 0-2, ECH, ICH and DCH end it, leaving the cursor on the last column, and BS and
//!   CUB count back from that column (CBT too: xterm's keeps the wrap pending after moving back,
//!   which this model, pending only at the margin, cannot); CUF and CHA end it too. HT, SGR, DECSC (which saves
//!   it) and scrolling (SU/SD) keep it.
//! * Soft-wrapped rows are joined by `text`, `lines()` and `spans()`. EL 0 and 2, ED, ECH and
//!   DCH end a row's soft wrap (as xterm's `ClearRight` and `ScrnDeleteChar` do), and so does
//!   EL 1 from the last column (it blanks the whole row). When a wide character wraps because
//!   only the last column was left, that column is padding and the joined text skips it.
//! * Alternate screen, as xterm's charproc.c: ?47h/?1047h show it as it was left (never
//!   cleared), ?47l shows the primary screen, ?1047l clears the alternate screen (when shown)
//!   and then leaves it; ?1049h saves the cursor, shows and clears the alternate screen, and
//!   ?1049l leaves it and restores the cursor, each step whichever screen is shown. RIS clears
//!   the alternate screen if shown and keeps it if not.
//! * Invalid UTF-8 becomes U+FFFD exactly as `CPython`'s `bytes.decode("utf-8", "replace")` does
//!   (maximal subparts), across chunk boundaries. Raw bytes 0x80-0x9F are never C1 controls
//!   (they are invalid UTF-8); the decoded code points U+0080-U+009F are dropped.
//! * Widths come from `unicode-width` (non-CJK); widths above 2 count as 2; zero-width
//!   characters (combining marks, ZWJ, variation selectors) join the previous cell.
//! * Erased cells are default blanks (no background-colour erase). `text`, `lines()` and
//!   `screen()` trim a line's trailing blanks whatever their style; `spans()` keeps trailing
//!   blanks that can be seen (a background colour, inverse, underline or strike-through) and
//!   then has a row for a trailing line of them that `lines()` drops.
//!
//! # Bounds
//! OSC payloads over 64 KiB are discarded whole; DCS/SOS/PM/APC payloads are never stored; a
//! CSI takes at most 32 parameters and sub-parameters (more: ignored), each saturating at
//! 65535, and every count but REP's is clamped to the grid (REP repeats as many times as it
//! says, as xterm does: up to 65,535 cells per sequence, wrapping and scrolling); scrollback is capped by `scrollback` lines
//! and by `max_bytes` (one unit per stored cell plus 128 per line); at most 65,536 styles,
//! 4,096 OSC 8 links (URIs over 2083 bytes are ignored) and 65,536 grapheme clusters of at most
//! 16 code points are interned (beyond: default style, no link, extra marks dropped).
//!
//! * Tab stops are every 8 columns until HTS/TBC set or clear them (HT, CHT and CBT move
//!   between them); origin mode (DECOM) addresses rows from the top margin.
//!
//! # Not implemented (consumed and ignored)
//! Character sets (SCS, SO/SI, DEC line drawing), insert mode (IRM), left/right margins,
//! double-width lines, blink/conceal/underline colour, and all queries (never answered).

pub mod parser;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt;
use std::mem::MaybeUninit;
use std::sync::Arc;

// Keyed hashing: the tables are filled from the stream (URIs, clusters), so it must resist
// flooding, and SipHash costs more than the rest of an interning.
use ahash::AHashMap as HashMap;

use crate::prefetch::prefetch;
use parser::{Params, State};
use unicode_width::UnicodeWidthChar;

/// Row width used when `cols` is `None`.
pub const UNBOUNDED_COLS: usize = 8192;
/// The columns DECALN fills when `cols` is `None`: the VT100's width, not a whole row of
/// [`UNBOUNDED_COLS`] (three bytes would otherwise write 8,192 cells per row).
const DECALN_TRANSCRIPT_COLS: usize = 80;
/// Widest and tallest grid. Escape sequences address at most column and row 65535, so a larger
/// grid holds nothing more; the screen is allocated row by row up front, so its height must
/// stay in reason.
pub const MAX_COLS: usize = 65_535;
pub const MAX_ROWS: usize = 65_535;
/// Largest OSC payload kept; a longer OSC is dropped whole.
pub const MAX_OSC_BYTES: usize = 64 * 1024;
/// The OSC buffer's capacity kept between sequences: room for a typical OSC 8 link.
const OSC_KEPT_CAPACITY: usize = 1024;
const MAX_STYLES: usize = 65536;
const MAX_LINKS: usize = 4096;
const MAX_LINK_BYTES: usize = 2083;
const MAX_CLUSTERS: usize = 65536;
const MAX_CLUSTER_CHARS: usize = 16;

const BOLD: u32 = 1;
const DIM: u32 = 2;
const ITALIC: u32 = 4;
const UNDERLINE: u32 = 8;
const INVERSE: u32 = 16;
const STRIKE: u32 = 32;
/// Colours are encoded as 0 = default, 1..=256 = palette index + 1, `RGB_BIT | 0xRRGGBB`.
const RGB_BIT: u32 = 1 << 24;

/// Cell text: a char, the right half of a wide character, or an interned cluster.
const CONT: u32 = u32::MAX;
/// Cells a line's buffer gets when it first grows.
const LINE_CAPACITY: usize = 128;
/// What a line kept in scrollback costs of `max_bytes` besides its cells: its buffer's first
/// allocation, which a short line keeps whole. With at most twice a line's cells in its buffer
/// (see `scroll_up`), the scrollback's memory stays within 16 bytes per unit of `max_bytes`.
const LINE_COST: usize = LINE_CAPACITY;
/// What an interned style or grapheme cluster counts in [`Terminal::retained_bytes`] (a
/// cluster, its UTF-8 bytes besides).
const INTERNED_COST: usize = 8;
/// The room a row's buffer may keep beyond four times its cells (see `release_slack`).
const SLACK_CELLS: usize = 2 * LINE_CAPACITY;
/// How many lines ahead a view asks for the cells it reads next.
const PREFETCH_LINES: usize = 4;
const CLUSTER_BIT: u32 = 1 << 31;

/// A colour of a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    /// Palette index 0-255 (0-7 normal, 8-15 bright, then the 256-colour cube and greys).
    Indexed(u8),
    /// 24-bit colour.
    Rgb(u8, u8, u8),
}

fn color_out(c: u32) -> Option<Color> {
    let [_, r, g, b] = c.to_be_bytes();
    if c == 0 {
        None
    } else if c & RGB_BIT != 0 {
        Some(Color::Rgb(r, g, b))
    } else {
        // 1..=256: the index is the low byte of c - 1.
        Some(Color::Indexed((c - 1).to_be_bytes()[3]))
    }
}

/// The style of a span.
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent attributes, as in the Python Span"
)]
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Style {
    pub fg: Option<Color>,
    pub bg: Option<Color>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub inverse: bool,
    pub strike: bool,
    /// The OSC 8 hyperlink URI.
    pub link: Option<Arc<str>>,
}

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    pub text: String,
    pub style: Style,
}

/// A logical line of [`Terminal::styled_lines`]: its text, trailing blanks trimmed, and its
/// runs as (start in `text`, style id for [`Terminal::style`]); a run ends where the next
/// starts, the last at the end of `text`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StyledLine {
    pub text: String,
    pub runs: Vec<(usize, u32)>,
}

impl StyledLine {
    /// Trims the line's trailing blanks, with the runs that start in them, back to the last
    /// cell that is not a blank or whose style shows even on a blank (`styles`: see
    /// [`shows_blank`]).
    #[inline]
    fn trim_blanks(&mut self, styles: &[StyleKey]) {
        // Most lines end in a non-blank (runs are never empty): nothing to trim.
        if self.text.as_bytes().last().is_some_and(|&b| b != b' ') {
            return;
        }
        let mut keep = self.text.len();
        while let Some(&(begin, sid)) = self.runs.last() {
            if styles.get(sid as usize).is_some_and(shows_blank) {
                break;
            }
            // Bytes, not chars: a space byte is never part of a longer character.
            keep = begin
                + self.text.as_bytes()[begin..keep]
                    .iter()
                    .rposition(|&b| b != b' ')
                    .map_or(0, |p| p + 1);
            if keep > begin {
                break;
            }
            self.runs.pop();
        }
        self.text.truncate(keep);
    }
}

/// Whether a blank cell of style `k` can be seen: it has a background colour, or is inverse,
/// underlined or struck through. Trailing blanks of such styles stay in
/// [`Terminal::spans`]; every other view trims all trailing blanks.
fn shows_blank(k: &StyleKey) -> bool {
    k.bg != 0 || k.flags & (INVERSE | UNDERLINE | STRIKE) != 0
}

/// Progress reported with OSC 9;4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// 1 normal, 2 error, 3 indeterminate, 4 paused (0 clears and is never stored).
    pub state: u8,
    /// 0-100, or `None` when not given (always `None` for state 3).
    pub percent: Option<u8>,
}

/// Terminal data that could not be decoded; nothing of it was applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TerminalDataError {
    /// A byte outside the base64 alphabet.
    Alphabet { offset: usize, byte: u8 },
    /// The length is not a multiple of 4.
    Length { len: usize },
    /// `=` somewhere other than the last one or two positions.
    Padding { offset: usize },
    /// The last data character carries bits past the data (non-canonical encoding).
    TrailingBits { offset: usize },
}

impl fmt::Display for TerminalDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Alphabet { offset, byte } => write!(
                f,
                "invalid base64: byte 0x{byte:02x} at offset {offset} is not in the RFC 4648 alphabet"
            ),
            Self::Length { len } => {
                write!(f, "invalid base64: length {len} is not a multiple of 4")
            }
            Self::Padding { offset } => {
                write!(f, "invalid base64: misplaced padding at offset {offset}")
            }
            Self::TrailingBits { offset } => {
                write!(
                    f,
                    "invalid base64: non-zero padding bits at offset {offset}"
                )
            }
        }
    }
}

impl std::error::Error for TerminalDataError {}

fn b64_value(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Explains why `data` is not strict base64 (the slow path, taken only after SIMD decoding
/// failed). The checks and their order are the Python twin's.
fn base64_error(data: &[u8]) -> TerminalDataError {
    if let Some(i) = data
        .iter()
        .position(|&b| b != b'=' && b64_value(b).is_none())
    {
        return TerminalDataError::Alphabet {
            offset: i,
            byte: data[i],
        };
    }
    let n = data.len();
    if !n.is_multiple_of(4) {
        return TerminalDataError::Length { len: n };
    }
    if let Some(p) = data.iter().position(|&b| b == b'=') {
        if p + 2 < n || data[p..].iter().any(|&b| b != b'=') {
            return TerminalDataError::Padding { offset: p };
        }
        let last = p - 1;
        let mask = if n - p == 1 { 0x3 } else { 0xF };
        if b64_value(data[last]).unwrap_or(0) & mask != 0 {
            return TerminalDataError::TrailingBits { offset: last };
        }
    }
    // Unreachable when the decoder and these rules agree (the harness checks they do).
    TerminalDataError::Length { len: n }
}

/// Decodes strict RFC 4648 base64 (standard alphabet, padding required, canonical bits).
pub fn decode_base64(data: &[u8]) -> Result<Vec<u8>, TerminalDataError> {
    let mut out = Vec::new();
    decode_base64_into(data, &mut out)?;
    Ok(out)
}

/// [`decode_base64`] into `out`, replacing what it held and reusing its memory, so that a
/// stream of chunks decoded into one buffer allocates (and faults in fresh pages) only while
/// the chunks grow. On an error `out` is left empty.
pub fn decode_base64_into(data: &[u8], out: &mut Vec<u8>) -> Result<(), TerminalDataError> {
    out.clear();
    let decoder = &base64_simd::STANDARD;
    let len = decoder
        .decoded_length(data)
        .map_err(|_| base64_error(data))?;
    out.reserve(len);
    let written = decoder
        .decode(
            data,
            base64_simd::Out::from_uninit_slice(&mut out.spare_capacity_mut()[..len]),
        )
        .map_err(|_| base64_error(data))?
        .len();
    // SAFETY: `decode` initialized the first `written` bytes of the spare capacity.
    unsafe { out.set_len(written) };
    Ok(())
}

/// Terminal size and retention limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalConfig {
    /// Grid width, or `None` for a transcript whose lines do not wrap.
    pub cols: Option<usize>,
    /// Screen height.
    pub rows: usize,
    /// Most lines kept above the screen.
    pub scrollback: usize,
    /// Most cells (plus 128 per line) kept in scrollback.
    pub max_bytes: usize,
}

impl Default for TerminalConfig {
    fn default() -> Self {
        TerminalConfig {
            cols: None,
            rows: 24,
            scrollback: 10_000,
            max_bytes: 16 * 1024 * 1024,
        }
    }
}

/// A cell: its text (low half) and style id (high half) in one word, so that writing a run
/// of characters is a loop the compiler vectorizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(transparent)]
struct Cell(u64);

impl Cell {
    #[inline]
    const fn new(ch: u32, style: u32) -> Cell {
        Cell((style as u64) << 32 | ch as u64)
    }
    #[inline]
    fn ch(self) -> u32 {
        #[allow(clippy::cast_possible_truncation, reason = "the low half is the text")]
        let ch = self.0 as u32;
        ch
    }
    #[inline]
    fn style(self) -> u32 {
        u32::try_from(self.0 >> 32).unwrap_or(0)
    }
    #[inline]
    fn set_ch(&mut self, ch: u32) {
        self.0 = self.0 & !u64::from(u32::MAX) | u64::from(ch);
    }
}

const BLANK: Cell = Cell::new(b' ' as u32, 0);

#[derive(Clone, Debug, Default)]
struct Line {
    /// Cells past the end are default blanks.
    cells: Vec<Cell>,
    /// Soft-wrapped into the next row.
    wrapped: bool,
    /// Wrapped early, before a wide character that did not fit in the last column: that
    /// column is padding, not part of the text the views join.
    wide_wrap: bool,
}

impl Line {
    /// Blanks the line, keeping its buffer for what is written next.
    fn clear(&mut self) {
        self.cells.clear();
        self.wrapped = false;
    }
}

/// Gives back most of a buffer that holds far fewer cells than it has room for, keeping at
/// most `SLACK_CELLS` cells, or four times its cells, of room.
fn release_slack(cells: &mut Vec<Cell>) {
    if cells.capacity() > SLACK_CELLS && cells.capacity() > 4 * cells.len() {
        cells.shrink_to((2 * cells.len()).max(LINE_CAPACITY));
    }
}

/// Where the text view is written: UTF-8 (`String`), or one code point per `u32`.
trait TextOut {
    fn reserve(&mut self, units: usize);
    /// Appends the characters of `line`'s cells.
    fn push_row(&mut self, terminal: &Terminal, line: &Line);
    fn push_spaces(&mut self, n: usize);
    /// Appends `unit`, an ASCII character.
    fn push_unit(&mut self, unit: u8);
    fn len(&self) -> usize;
    /// Drops the trailing copies of `unit`, an ASCII character, found after `start`.
    fn trim_end_from(&mut self, start: usize, unit: u8);
}

impl TextOut for String {
    fn reserve(&mut self, units: usize) {
        String::reserve(self, units);
    }
    fn push_row(&mut self, terminal: &Terminal, line: &Line) {
        terminal.row_text(self, line);
    }
    fn push_spaces(&mut self, n: usize) {
        self.extend(std::iter::repeat_n(' ', n));
    }
    fn push_unit(&mut self, unit: u8) {
        self.push(char::from(unit));
    }
    fn len(&self) -> usize {
        String::len(self)
    }
    fn trim_end_from(&mut self, start: usize, unit: u8) {
        let keep = start + self[start..].trim_end_matches(char::from(unit)).len();
        self.truncate(keep);
    }
}

impl TextOut for Vec<u32> {
    fn reserve(&mut self, units: usize) {
        Vec::reserve(self, units);
    }
    fn push_row(&mut self, terminal: &Terminal, line: &Line) {
        let start = self.len();
        // Rows of characters below the surrogates (nearly all: no cluster, no continuation
        // cell), copied and checked in passes the compiler vectorizes; any other row cell by
        // cell.
        self.extend(line.cells.iter().map(|c| c.ch()));
        if !line
            .cells
            .iter()
            .fold(false, |above, c| above | (c.ch() >= 0xD800))
        {
            return;
        }
        self.truncate(start);
        for c in &line.cells {
            let ch = c.ch();
            if char::from_u32(ch).is_some() {
                self.push(ch);
            } else if ch != CONT {
                // A cluster: its base character and marks.
                let cluster = &terminal.clusters[(ch & !CLUSTER_BIT) as usize];
                self.extend(cluster.chars().map(u32::from));
            }
        }
    }
    fn push_spaces(&mut self, n: usize) {
        self.extend(std::iter::repeat_n(u32::from(b' '), n));
    }
    fn push_unit(&mut self, unit: u8) {
        self.push(u32::from(unit));
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn trim_end_from(&mut self, start: usize, unit: u8) {
        let kept = self[start..]
            .iter()
            .rposition(|&c| c != u32::from(unit))
            .map_or(0, |p| p + 1);
        self.truncate(start + kept);
    }
}

/// Characters a run of cells is written from: bytes (ASCII) or code points.
trait CellChars: Copy + Into<u32> {
    /// Writes `src.len()` cells at `dst`, each a character of `src` in style `style`.
    ///
    /// # Safety
    /// `dst` must be valid for writing `src.len()` cells.
    unsafe fn store(dst: *mut Cell, src: &[Self], style: u32) {
        for (k, &ch) in src.iter().enumerate() {
            // SAFETY: k < src.len(), which the caller guarantees `dst` has room for.
            unsafe { dst.add(k).write(Cell::new(ch.into(), style)) };
        }
    }
}

/// Writes four cells at `out`: the four 32-bit characters of `chars`, each paired with the
/// style in every lane of `style_lanes` (a cell is its character, then its style).
///
/// # Safety
/// `out` must be valid for writing four cells.
#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(clippy::cast_ptr_alignment, reason = "the stores are unaligned")]
unsafe fn put_cells4(
    out: *mut Cell,
    chars: std::arch::x86_64::__m128i,
    style_lanes: std::arch::x86_64::__m128i,
) {
    use std::arch::x86_64::{__m128i, _mm_storeu_si128, _mm_unpackhi_epi32, _mm_unpacklo_epi32};
    let p = out.cast::<__m128i>();
    // SAFETY: SSE2 is baseline on x86_64; the caller guarantees room for four cells at `out`.
    unsafe {
        _mm_storeu_si128(p, _mm_unpacklo_epi32(chars, style_lanes));
        _mm_storeu_si128(p.add(1), _mm_unpackhi_epi32(chars, style_lanes));
    }
}

/// The lanes of `v` that hold a C0 control or DEL, as all-ones bytes.
#[cfg(target_arch = "x86_64")]
#[inline]
fn controls_and_dels(v: std::arch::x86_64::__m128i) -> std::arch::x86_64::__m128i {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_min_epu8, _mm_or_si128, _mm_set1_epi8};
    // SAFETY: SSE2 is baseline on x86_64; these only compute on registers.
    unsafe {
        let ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v);
        let del = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F));
        _mm_or_si128(ctl, del)
    }
}

// Code points come from a buffer just written, partly a code point at a time; reading it
// four at a time measured no slower for the stores it may have to wait for.
impl CellChars for u32 {
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "the loads and stores are unaligned"
    )]
    unsafe fn store(dst: *mut Cell, src: &[u32], style: u32) {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_set1_epi32};
        let n = src.len();
        if n < 4 {
            for (k, &ch) in src.iter().enumerate() {
                // SAFETY: k < n, which the caller guarantees `dst` has room for.
                unsafe { dst.add(k).write(Cell::new(ch, style)) };
            }
            return;
        }
        // Eight cells at a time (a loop of blocks of four was half loop overhead), then the
        // rest, the last four overlapping those before them.
        // SAFETY: SSE2 is baseline on x86_64; each block reads `src[at..at + 4]` and writes
        // the cells of the same positions, within the `n` cells `dst` has room for.
        unsafe {
            let style_lanes = _mm_set1_epi32(style.cast_signed());
            let block = |at: usize| {
                let chars = _mm_loadu_si128(src.as_ptr().add(at).cast());
                put_cells4(dst.add(at), chars, style_lanes);
            };
            let mut at = 0;
            while at + 8 <= n {
                block(at);
                block(at + 4);
                at += 8;
            }
            if at + 4 < n {
                block(at);
            }
            if at < n {
                block(n - 4);
            }
        }
    }
}

impl CellChars for u8 {
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        reason = "the loads and stores are unaligned"
    )]
    unsafe fn store(dst: *mut Cell, src: &[u8], style: u32) {
        use std::arch::x86_64::{
            __m128i, _mm_cvtsi32_si128, _mm_loadl_epi64, _mm_loadu_si128, _mm_set1_epi32,
            _mm_setzero_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi64, _mm_unpacklo_epi8,
            _mm_unpacklo_epi16,
        };
        /// Writes the cells of the eight characters in the low half of `v` at `out`.
        #[inline]
        unsafe fn put8(out: *mut Cell, v: __m128i, style_lanes: __m128i) {
            // SAFETY: SSE2 is baseline on x86_64; the caller guarantees room for eight cells
            // at `out`.
            unsafe {
                let zero = _mm_setzero_si128();
                let lo16 = _mm_unpacklo_epi8(v, zero);
                put_cells4(out, _mm_unpacklo_epi16(lo16, zero), style_lanes);
                put_cells4(out.add(4), _mm_unpackhi_epi16(lo16, zero), style_lanes);
            }
        }
        /// Writes the cells of the sixteen characters at `src` at `out`.
        #[inline]
        unsafe fn put16(out: *mut Cell, src: *const u8, style_lanes: __m128i) {
            // SAFETY: the caller guarantees sixteen bytes at `src` and room for sixteen
            // cells at `out`.
            unsafe {
                let v = _mm_loadu_si128(src.cast());
                put8(out, v, style_lanes);
                put8(out.add(8), _mm_unpackhi_epi64(v, v), style_lanes);
            }
        }
        let n = src.len();
        let s = src.as_ptr();
        // Runs are short (a word, a path, a number), so a run's tail is written as whole
        // blocks too: the last block overlaps the one before it and writes some cells twice,
        // with the same values. SAFETY (every block below): SSE2 is baseline on x86_64; each
        // block reads bytes within `src` and writes the cells of the same positions, within
        // the `n` cells `dst` has room for.
        unsafe {
            let style_lanes = _mm_set1_epi32(style.cast_signed());
            if n >= 16 {
                let mut i = 0;
                while i + 16 <= n {
                    put16(dst.add(i), s.add(i), style_lanes);
                    i += 16;
                }
                if i < n {
                    put16(dst.add(n - 16), s.add(n - 16), style_lanes);
                }
            } else if n >= 8 {
                put8(dst, _mm_loadl_epi64(s.cast()), style_lanes);
                put8(
                    dst.add(n - 8),
                    _mm_loadl_epi64(s.add(n - 8).cast()),
                    style_lanes,
                );
            } else if n >= 4 {
                let zero = _mm_setzero_si128();
                for at in [0, n - 4] {
                    let v = _mm_cvtsi32_si128(s.add(at).cast::<i32>().read_unaligned());
                    let chars = _mm_unpacklo_epi16(_mm_unpacklo_epi8(v, zero), zero);
                    put_cells4(dst.add(at), chars, style_lanes);
                }
            } else {
                for (k, &ch) in src.iter().enumerate() {
                    dst.add(k).write(Cell::new(u32::from(ch), style));
                }
            }
        }
    }
}

/// Sets `dst` to the characters of `src` (at least as long) in style `style`.
#[inline]
fn fill<T: CellChars>(dst: &mut [Cell], src: &[T], style: u32) {
    let src = &src[..dst.len()];
    // SAFETY: `dst` holds exactly `src.len()` cells.
    unsafe { T::store(dst.as_mut_ptr(), src, style) };
}

/// Appends the characters of `src` in style `style`.
#[inline]
fn extend<T: CellChars>(cells: &mut Vec<Cell>, src: &[T], style: u32) {
    let len = cells.len();
    if cells.capacity() - len < src.len() {
        // A line is written a run at a time: room for a typical line at once saves the
        // reallocations of growing it run by run.
        cells.reserve(src.len().max(LINE_CAPACITY.saturating_sub(len)));
    }
    // SAFETY: the reserve leaves room for `src.len()` cells past `len`, all of which `store`
    // initializes before the length covers them.
    unsafe {
        T::store(cells.as_mut_ptr().add(len), src, style);
        cells.set_len(len + src.len());
    }
}

/// The eight cells at `cells[at..]`, as four loads, and their characters (the cells' low
/// halves) packed to eight words with signed saturation.
///
/// # Safety
/// `at + 8 <= cells.len()`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(clippy::cast_ptr_alignment, reason = "unaligned loads")]
unsafe fn load_cells8(
    cells: &[Cell],
    at: usize,
) -> ([std::arch::x86_64::__m128i; 4], std::arch::x86_64::__m128i) {
    use std::arch::x86_64::{
        __m128i, _mm_castps_si128, _mm_castsi128_ps, _mm_loadu_si128, _mm_packs_epi32,
        _mm_shuffle_ps,
    };
    // SAFETY: SSE2 is baseline on x86_64; the loads read `cells[at..at + 8]`, in bounds by
    // the caller's word (a `Cell` is 8 bytes: two per load).
    unsafe {
        // The low halves of the two cells of `a` then of `b`.
        let low_halves = |a: __m128i, b: __m128i| {
            let (a, b) = (_mm_castsi128_ps(a), _mm_castsi128_ps(b));
            _mm_castps_si128(_mm_shuffle_ps::<0b10_00_10_00>(a, b))
        };
        let p = cells.as_ptr().add(at).cast::<__m128i>();
        let q = [0, 1, 2, 3].map(|k| _mm_loadu_si128(p.add(k)));
        (
            q,
            _mm_packs_epi32(low_halves(q[0], q[1]), low_halves(q[2], q[3])),
        )
    }
}

/// The block loop of the SIMD copies of ASCII cells: `block(at)` gives, for the eight cells at
/// `at`, a mask with `BITS` bits set per cell to take (cell k's at bit `k * BITS`) and their
/// eight bytes. Appends the bytes of the leading cells taken to `out`; returns how many.
///
/// Each block stores its eight bytes unchecked and keeps those of its leading cells taken, so a
/// run's end costs no cell-by-cell tail. The last cells, fewer than eight, are the tail of a
/// block that ends with the slice: its first cells, already taken, store the same bytes again.
///
/// # Safety
/// `len >= 8`, and `block(at)` must be sound to call for every `at` with `at + 8 <= len`.
#[cfg(target_arch = "x86_64")]
#[inline]
unsafe fn take_blocks<const BITS: u32>(
    len: usize,
    out: &mut Vec<u8>,
    block: impl Fn(usize) -> (u32, i64),
) -> usize {
    let all = (1_u32 << (8 * BITS)) - 1;
    // Room for every cell up front. With `start` the length `out` had, `end - start` is `n`
    // (every cell taken so far is a byte): a block at `n` stores `out[end..end + 8]`, the
    // tail block (`back = 8 - (len - n)`, at most `n`) `out[end - back..end - back + 8]`,
    // both ending by `start + len`, within the reserve; the length then covers only bytes
    // written.
    out.reserve(len);
    let mut end = out.len();
    let mut n = 0;
    let dst = out.as_mut_ptr();
    while n + 8 <= len {
        let (ok, bytes) = block(n);
        // SAFETY: within the reserve, as above.
        unsafe { dst.add(end).cast::<i64>().write_unaligned(bytes) };
        if ok != all {
            let lead = ((!ok).trailing_zeros() / BITS) as usize;
            // SAFETY: `lead` of the bytes just stored are kept.
            unsafe { out.set_len(end + lead) };
            return n + lead;
        }
        end += 8;
        n += 8;
    }
    let back = 8 - (len - n);
    if back < 8 {
        let (ok, bytes) = block(len - 8);
        // SAFETY: within the reserve, as above.
        unsafe { dst.add(end - back).cast::<i64>().write_unaligned(bytes) };
        // The cells past `n`; the bits above theirs are clear, so at most all lead.
        #[allow(clippy::cast_possible_truncation, reason = "back < 8")]
        let lead = ((!(ok >> (BITS * back as u32))).trailing_zeros() / BITS) as usize;
        end += lead;
        n += lead;
    }
    // SAFETY: every byte up to `end` was stored.
    unsafe { out.set_len(end) };
    n
}

/// Appends the leading ASCII cells of `cells` to `out` as bytes, eight at a time; returns how
/// many. A cell is taken while its bits under `mask` equal `want` (`mask` covers the character
/// bits above 0x7F, and the style's bits to keep to one style).
fn copy_ascii_where(cells: &[Cell], mask: u64, want: u64, out: &mut Vec<u8>) -> usize {
    let mut n = 0;
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss,
        reason = "unaligned loads; the bits are compared, not the values"
    )]
    if cells.len() >= 8 {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_cmpeq_epi32, _mm_cvtsi128_si64, _mm_movemask_epi8,
            _mm_packs_epi16, _mm_packs_epi32, _mm_packus_epi16, _mm_set1_epi64x,
        };
        // Eight cells (four loads) at a time: the cells' characters, the low bytes of their
        // low halves, are packed into eight bytes, and a mask of which cells match says how
        // many of them lead.
        // SAFETY: SSE2 is baseline on x86_64; `block(at)` loads `cells[at..at + 8]`, which
        // `take_blocks` asks for only with `at + 8 <= cells.len()`.
        unsafe {
            let (mask, want) = (_mm_set1_epi64x(mask as i64), _mm_set1_epi64x(want as i64));
            let matches = |v: __m128i| _mm_cmpeq_epi32(_mm_and_si128(v, mask), want);
            // Two bits per matching cell (cell k: bits 2k and 2k + 1), and the eight bytes.
            let block = |at: usize| {
                let (q, words) = load_cells8(cells, at);
                let ok = _mm_packs_epi16(
                    _mm_packs_epi32(matches(q[0]), matches(q[1])),
                    _mm_packs_epi32(matches(q[2]), matches(q[3])),
                );
                // Characters below 0x80 pack unchanged; the others are not kept.
                let bytes = _mm_cvtsi128_si64(_mm_packus_epi16(words, words));
                (_mm_movemask_epi8(ok) as u32, bytes)
            };
            return take_blocks::<2>(cells.len(), out, block);
        }
    }
    for chunk in cells[n..].chunks_exact(8) {
        let (mut bytes, mut other) = (0u64, 0u64);
        for (k, cell) in chunk.iter().enumerate() {
            other |= (cell.0 & mask) ^ want;
            bytes |= (cell.0 & 0x7F) << (8 * k);
        }
        if other != 0 {
            break;
        }
        out.extend_from_slice(&bytes.to_le_bytes());
        n += 8;
    }
    for cell in &cells[n..] {
        if cell.0 & mask != want {
            break;
        }
        #[allow(clippy::cast_possible_truncation, reason = "below 0x80")]
        out.push(cell.0 as u8);
        n += 1;
    }
    n
}

/// The leading ASCII cells, whatever their style, but for a cell of character 0, where it
/// stops as at any other (the caller takes that one itself).
///
/// Eight cells at a time, as [`copy_ascii_where`] but without its compare of each cell: the
/// packing of the characters to bytes says which were ASCII. Signed saturation takes a
/// character above 0x7FFF to 0x7FFF, and one with its top bit set (a wide character's second
/// cell, a cluster) to a negative word; unsigned saturation then takes words above 0xFF to
/// 0xFF and negative ones to 0. So a cell packs to a byte of 1 to 0x7F exactly when its
/// character is one: any other byte has its top bit set or is 0.
fn copy_ascii(cells: &[Cell], out: &mut Vec<u8>) -> usize {
    #[cfg(target_arch = "x86_64")]
    #[allow(
        clippy::cast_ptr_alignment,
        clippy::cast_sign_loss,
        reason = "unaligned loads; the mask is read as bits"
    )]
    if cells.len() >= 8 {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16,
            _mm_setzero_si128,
        };
        // SAFETY: as in `copy_ascii_where`: SSE2 is baseline on x86_64; `block(at)` loads
        // `cells[at..at + 8]`, which `take_blocks` asks for only with `at + 8 <= cells.len()`.
        unsafe {
            // A bit per ASCII cell (cell k: bit k), and the eight bytes.
            let block = |at: usize| {
                let (_, words) = load_cells8(cells, at);
                let bytes = _mm_packus_epi16(words, words);
                let stops = _mm_or_si128(bytes, _mm_cmpeq_epi8(bytes, _mm_setzero_si128()));
                (
                    !(_mm_movemask_epi8(stops) as u32) & 0xFF,
                    _mm_cvtsi128_si64(bytes),
                )
            };
            return take_blocks::<1>(cells.len(), out, block);
        }
    }
    let start = out.len();
    let n = copy_ascii_where(cells, 0xFFFF_FF80, 0, out);
    let n = out[start..].iter().position(|&b| b == 0).unwrap_or(n);
    out.truncate(start + n);
    n
}

/// The leading ASCII cells of style `style`.
fn copy_ascii_of_style(cells: &[Cell], style: u32, out: &mut Vec<u8>) -> usize {
    copy_ascii_where(cells, !0x7F, u64::from(style) << 32, out)
}

/// The `;`-separated decimal parameters (at most 16, each at most 65535) and the final byte of
/// a CSI at `rest` (after `ESC [`), and its length; `None` for anything else (private markers,
/// colons, intermediates, controls, the end of the data).
#[inline]
fn plain_params(rest: &[u8]) -> Option<([u16; 16], usize, u8, usize)> {
    let mut vals = [0u16; 16];
    let mut count = 0;
    let mut j = 0;
    loop {
        // A parameter's digits, in a loop of their own: a colour's take most of an SGR.
        let mut acc: u32 = 0;
        while let Some(d) = rest
            .get(j)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|&d| d < 10)
        {
            acc = (acc * 10 + u32::from(d)).min(65535);
            j += 1;
        }
        let &b = rest.get(j)?;
        j += 1;
        match b {
            b';' if count < vals.len() - 1 => {}
            0x40..=0x7E => {}
            _ => return None,
        }
        vals[count] = param16(acc);
        count += 1;
        if b != b';' {
            return Some((vals, count, b, j));
        }
    }
}

/// How many of `bytes` lead as digits and `;`s (16 if all do).
#[inline]
fn param_bytes(bytes: &[u8; 16]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_set1_epi8,
            _mm_sub_epi8,
        };
        // SAFETY: SSE2 is baseline on x86_64; the load reads the 16 bytes.
        let others = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().cast());
            let d = _mm_sub_epi8(v, _mm_set1_epi8(0x30));
            // Digits (0x30..=0x39) and ';' (0x3B) are those at most 0x0B above 0x30, but ':'.
            let low = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(0x0B)), d);
            let colon = _mm_cmpeq_epi8(v, _mm_set1_epi8(0x3A));
            !_mm_movemask_epi8(low).cast_unsigned() | _mm_movemask_epi8(colon).cast_unsigned()
        };
        (others | 1 << 16).trailing_zeros() as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    bytes
        .iter()
        .position(|&b| !(b.is_ascii_digit() || b == b';'))
        .unwrap_or(16)
}

/// What an SGR does to a pen, whatever the pen: each bit of its colours and attributes is
/// kept, cleared or set (each code sets a field or sets or clears flags; none reads the pen).
/// The link is never touched.
#[derive(Clone, Copy, Default)]
struct PenEdit {
    keep: [u32; 3],
    set: [u32; 3],
}

impl PenEdit {
    /// The edit of an SGR of parameters `vals`: what it makes of a pen of all zeros gives
    /// the bits it sets, and of one of all ones those it keeps (or sets).
    fn of(vals: &[u16]) -> PenEdit {
        let zeros = sgr(StyleKey::default(), &Plain(vals));
        let ones = sgr(
            StyleKey {
                fg: u32::MAX,
                bg: u32::MAX,
                flags: u32::MAX,
                link: 0,
            },
            &Plain(vals),
        );
        let set = [zeros.fg, zeros.bg, zeros.flags];
        let all = [ones.fg, ones.bg, ones.flags];
        PenEdit {
            keep: [0, 1, 2].map(|k| all[k] & !set[k]),
            set,
        }
    }

    #[inline]
    fn apply(self, pen: StyleKey) -> StyleKey {
        StyleKey {
            fg: pen.fg & self.keep[0] | self.set[0],
            bg: pen.bg & self.keep[1] | self.set[1],
            flags: pen.flags & self.keep[2] | self.set[2],
            link: pen.link,
        }
    }
}

/// Cutting between the halves of a wide character blanks both halves.
#[inline]
fn split(cells: &mut [Cell], x: usize) {
    if x > 0 && x < cells.len() && cells[x].ch() == CONT {
        cells[x - 1] = BLANK;
        cells[x] = BLANK;
    }
}

/// A pen. Pens are compared and hashed often (every SGR, every style lookup), so both work on
/// the packed words rather than field by field.
#[derive(Clone, Copy, Default)]
struct StyleKey {
    fg: u32,
    bg: u32,
    flags: u32,
    link: u32,
}

impl PartialEq for StyleKey {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.packed() == other.packed()
    }
}

impl Eq for StyleKey {}

impl std::hash::Hash for StyleKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.packed().hash(state);
    }
}

const STYLE_CACHE: usize = 64;
const SGR_MEMO: usize = 16;
const SGR_STEPS: usize = 64;
const WIDTH_CACHE: usize = 256;

impl StyleKey {
    #[inline]
    fn packed(self) -> u128 {
        u128::from(self.fg)
            | u128::from(self.bg) << 32
            | u128::from(self.flags) << 64
            | u128::from(self.link) << 96
    }

    #[inline]
    fn cache_slot(&self) -> usize {
        let words = u64::from(self.fg) | u64::from(self.bg) << 32;
        let h = (words ^ u64::from(self.flags) << 24 ^ u64::from(self.link) << 56)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The top bits mix every input bit.
        usize::try_from(h >> (64 - STYLE_CACHE.trailing_zeros())).unwrap_or(0)
    }
}

#[derive(Clone, Copy)]
struct Saved {
    row: usize,
    col: usize,
    pen: StyleKey,
    origin: bool,
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0).min(2)
}

/// A parameter value (already saturated at 65535) as stored.
#[inline]
fn param16(v: u32) -> u16 {
    u16::try_from(v).unwrap_or(u16::MAX)
}

/// An index into an interned table; the tables are capped far below `u32::MAX`.
#[inline]
fn id32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Cells taken by a printable character: 0 (joins the previous cell), 1 or 2.
pub fn width(c: char) -> usize {
    char_width(c)
}

/// `s` cut at its first `;`, as `str::split_once(';')` does with text, found byte by byte: an
/// OSC's fields are a few bytes long, shorter than what the general pattern search costs to
/// start.
#[inline]
fn split_field(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let p = s.iter().position(|&b| b == b';')?;
    Some((&s[..p], &s[p + 1..]))
}

/// The `;`-separated fields of `s`, as `split(|&b| b == b';')` yields them (see
/// [`split_field`]).
fn split_fields(s: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let s = rest?;
        let (field, after) = split_field(s).map_or((s, None), |(f, a)| (f, Some(a)));
        rest = after;
        Some(field)
    })
}

/// `bytes` as text, invalid sequences replaced by U+FFFD; the check of valid text, the usual
/// case, is cheaper than the lossy decoder's.
fn decode_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// An ASCII decimal saturating at 65535; `None` if empty or not all digits.
fn parse_uint(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s.iter()
            .fold(0u32, |acc, &b| (acc * 10 + u32::from(b - b'0')).min(65535)),
    )
}

/// Length of the printable prefix of `bytes` (up to the first C0 control or DEL), and whether
/// that prefix is all ASCII. Eight bytes at a time: runs of text are the bulk of any output.
#[inline]
fn scan_printable(bytes: &[u8]) -> (usize, bool) {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut high = 0u64;
    let mut i = 0;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8};
        let mut top = 0;
        while i + 16 <= bytes.len() {
            // SAFETY: SSE2 is baseline on x86_64 and the load reads `bytes[i..i + 16]`.
            let (stop, hi) = unsafe {
                let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast());
                (
                    _mm_movemask_epi8(controls_and_dels(v)).cast_unsigned(),
                    _mm_movemask_epi8(v).cast_unsigned(),
                )
            };
            if stop != 0 {
                let p = stop.trailing_zeros();
                return (i + p as usize, (top | (hi & ((1 << p) - 1))) == 0);
            }
            top |= hi;
            i += 16;
        }
        if top != 0 {
            high = HI;
        }
    }
    let mut chunks = bytes[i..].chunks_exact(8);
    for chunk in &mut chunks {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // Bytes below 0x20 (ignoring bytes >= 0x80) or equal to 0x7F set their high bit here.
        let lt = x.wrapping_sub(LO * 0x20) & !x;
        let y = x ^ (LO * 0x7F);
        let eq = y.wrapping_sub(LO) & !y;
        if (lt | eq) & HI != 0 {
            break;
        }
        high |= x;
        i += 8;
    }
    let mut ascii = high & HI == 0;
    for &b in &bytes[i..] {
        if b < 0x20 || b == 0x7F {
            break;
        }
        ascii &= b < 0x80;
        i += 1;
    }
    (i, ascii)
}

/// Moves the rows of `region` down by `n` (at most its length): the last `n` are dropped and
/// blank rows come in at the top.
fn shift_down(region: &mut [Line], n: usize) {
    region.rotate_right(n);
    region[..n].fill_with(Line::default);
}

/// Moves the rows of `region` up by `n` (at most its length): the first `n` are dropped and
/// blank rows come in at the bottom.
fn shift_up(region: &mut [Line], n: usize) {
    region.rotate_left(n);
    let kept = region.len() - n;
    region[kept..].fill_with(Line::default);
}

/// Copies the printable ASCII prefix of `src` (up to a byte above 0x7F, a C0 control or DEL)
/// into `dst` as code points, as far as `dst` has room, and returns its length; it initializes
/// `dst` up to that length at least, and past it is scratch. Sixteen bytes at a time; the rest
/// (a stretch of ASCII between other characters is short) as whole blocks too, the last one
/// ending where the room does: it overlaps bytes already copied, which are printable ASCII, so
/// it copies them again the same and finds no stop before the first it had not seen.
#[allow(clippy::cast_ptr_alignment, reason = "the stores are unaligned")]
#[inline]
fn widen_ascii(src: &[u8], dst: &mut [MaybeUninit<u32>]) -> usize {
    let n = src.len().min(dst.len());
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cvtsi32_si128, _mm_loadl_epi64, _mm_loadu_si128, _mm_movemask_epi8,
            _mm_or_si128, _mm_setzero_si128, _mm_storeu_si128, _mm_unpackhi_epi8,
            _mm_unpackhi_epi16, _mm_unpacklo_epi8, _mm_unpacklo_epi16,
        };
        let (from, to) = (src.as_ptr(), dst.as_mut_ptr());
        // Each block of `k` (16, 8 or 4) bytes at `at` reads `src[at..at + k]`, writes
        // `dst[at..at + k]` and returns the mask of its bytes that stop the copy.
        // SAFETY (every call below): SSE2 is baseline on x86_64, and `at + k <= n`.
        let block = |at: usize, k: usize| unsafe {
            let bytes = match k {
                16 => _mm_loadu_si128(from.add(at).cast()),
                8 => _mm_loadl_epi64(from.add(at).cast()),
                _ => _mm_cvtsi32_si128(from.add(at).cast::<i32>().read_unaligned()),
            };
            let zero = _mm_setzero_si128();
            let (lo, hi) = (
                _mm_unpacklo_epi8(bytes, zero),
                _mm_unpackhi_epi8(bytes, zero),
            );
            let out = to.add(at).cast::<__m128i>();
            _mm_storeu_si128(out, _mm_unpacklo_epi16(lo, zero));
            if k >= 8 {
                _mm_storeu_si128(out.add(1), _mm_unpackhi_epi16(lo, zero));
            }
            if k == 16 {
                _mm_storeu_si128(out.add(2), _mm_unpacklo_epi16(hi, zero));
                _mm_storeu_si128(out.add(3), _mm_unpackhi_epi16(hi, zero));
            }
            // High bits, and all bits of controls and DELs; lanes past `k` (zeros) masked off.
            let stops = _mm_or_si128(bytes, controls_and_dels(bytes));
            _mm_movemask_epi8(stops).cast_unsigned() & (u32::MAX >> (32 - k))
        };
        let mut i = 0;
        while i + 16 <= n {
            let high = block(i, 16);
            if high != 0 {
                return i + high.trailing_zeros() as usize;
            }
            i += 16;
        }
        if i == n {
            return n;
        }
        // The rest: a block of 16 ending at `n`, or, with fewer than 16 in all, two
        // overlapping blocks of 8 or of 4, from 0 and ending at `n`.
        let k = match n {
            16.. => 16,
            8.. => 8,
            4.. => 4,
            _ => return scalar_ascii(src, dst, i, n),
        };
        for at in [i.min(n - k), n - k] {
            let high = block(at, k);
            if high != 0 {
                return at + high.trailing_zeros() as usize;
            }
            if at == n - k {
                break;
            }
        }
        n
    }
    #[cfg(not(target_arch = "x86_64"))]
    scalar_ascii(src, dst, 0, n)
}

/// [`widen_ascii`] from `i` to `n`, a code point at a time.
#[inline]
fn scalar_ascii(src: &[u8], dst: &mut [MaybeUninit<u32>], mut i: usize, n: usize) -> usize {
    while i < n && (0x20..0x7F).contains(&src[i]) {
        dst[i] = MaybeUninit::new(u32::from(src[i]));
        i += 1;
    }
    i
}

/// `cells` as the values they hold.
///
/// # Safety
/// Every element of `cells` must be initialized.
#[inline]
unsafe fn assume_init(cells: &[MaybeUninit<u32>]) -> &[u32] {
    // SAFETY: `MaybeUninit<u32>` has the layout of `u32`, and the values are initialized.
    unsafe { &*(std::ptr::from_ref(cells) as *const [u32]) }
}

/// Length of the printable ASCII prefix of `bytes` (up to a byte above 0x7F, a C0 control or
/// DEL), and whether a byte above 0x7F ends it: text that is not ASCII goes to the UTF-8
/// decoder from there, which finds the end of the run itself, rather than after a scan for
/// its end. Sixteen bytes at a time; the rest as a block ending at the end.
#[inline]
fn scan_ascii(bytes: &[u8]) -> (usize, bool) {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= 16 {
        use std::arch::x86_64::{_mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128};
        // The bytes of `bytes[at..at + 16]` that are not printable ASCII, one bit each.
        // SAFETY (every call below): SSE2 is baseline on x86_64, and `at + 16 <= bytes.len()`.
        let stops = |at: usize| unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
            _mm_movemask_epi8(_mm_or_si128(v, controls_and_dels(v))).cast_unsigned()
        };
        let n = bytes.len();
        let mut i = 0;
        while i + 16 <= n {
            let stop = stops(i);
            if stop != 0 {
                i += stop.trailing_zeros() as usize;
                return (i, bytes[i] >= 0x80);
            }
            i += 16;
        }
        if i == n {
            return (n, false);
        }
        // The rest as the block ending at `n`: its bytes before `i` were seen and are
        // printable, so have no bits.
        let at = n - 16;
        let stop = stops(at);
        if stop == 0 {
            return (n, false);
        }
        i = at + stop.trailing_zeros() as usize;
        return (i, bytes[i] >= 0x80);
    }
    match bytes.iter().position(|b| !(0x20..0x7F).contains(b)) {
        Some(p) => (p, bytes[p] >= 0x80),
        None => (bytes.len(), false),
    }
}

/// How many whole copies of the three bytes before `start` follow it, at most `max`: the rest
/// of a bar or rule drawn with one character. Compares the bytes with those three before them,
/// sixteen at a time (a run of one three-byte character is exactly a run where they match).
#[inline]
fn repeats_of_3(bytes: &[u8], start: usize, max: usize) -> usize {
    debug_assert!(start >= 3);
    let limit = bytes.len().min(start.saturating_add(max.saturating_mul(3)));
    let mut j = start;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
        // Which of `bytes[at..at + 16]` equal the byte three before, one bit each.
        // SAFETY (every call below): SSE2 is baseline on x86_64; the loads read
        // `bytes[at..at + 16]` and `bytes[at - 3..at + 13]`, within `bytes` for
        // 3 <= at <= limit - 16.
        let same = |at: usize| unsafe {
            let here = _mm_loadu_si128(bytes.as_ptr().add(at).cast());
            let before = _mm_loadu_si128(bytes.as_ptr().add(at - 3).cast());
            _mm_movemask_epi8(_mm_cmpeq_epi8(here, before)).cast_unsigned()
        };
        while j + 16 <= limit {
            let same = same(j);
            if same != 0xFFFF {
                j += (!same).trailing_zeros() as usize;
                return (j - start) / 3;
            }
            j += 16;
        }
        // The rest as a block ending at `limit`; the bytes before `j` in it are known to match.
        if j < limit && limit >= 19 {
            let at = limit - 16;
            let same = same(at) | ((1 << (j - at)) - 1);
            j = if same == 0xFFFF {
                limit
            } else {
                at + (!same).trailing_zeros() as usize
            };
            return (j - start) / 3;
        }
    }
    while j < limit && bytes[j] == bytes[j - 3] {
        j += 1;
    }
    (j - start) / 3
}

/// The multi-byte UTF-8 sequence at the start of `b` as (code point, length), or `None` when
/// it is invalid or incomplete (the same rules as `std::str::from_utf8`: no overlongs, no
/// surrogates, nothing above U+10FFFF).
#[inline]
fn decode_utf8(b: &[u8]) -> Option<(u32, usize)> {
    let cont = |c: u8| (c & 0xC0 == 0x80).then_some(u32::from(c & 0x3F));
    match *b {
        [b0 @ 0xC2..=0xDF, b1, ..] => Some((u32::from(b0 & 0x1F) << 6 | cont(b1)?, 2)),
        [b0 @ 0xE0..=0xEF, b1, b2, ..] => {
            let o = u32::from(b0 & 0x0F) << 12 | cont(b1)? << 6 | cont(b2)?;
            (o >= 0x800 && !(0xD800..0xE000).contains(&o)).then_some((o, 3))
        }
        [b0 @ 0xF0..=0xF4, b1, b2, b3, ..] => {
            let o = u32::from(b0 & 0x07) << 18 | cont(b1)? << 12 | cont(b2)? << 6 | cont(b3)?;
            (0x1_0000..=0x10_FFFF).contains(&o).then_some((o, 4))
        }
        _ => None,
    }
}

/// A display-only terminal fed with raw PTY bytes.
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent parser, retention and mode flags"
)]
pub struct Terminal {
    cols: Option<usize>,
    w: usize,
    rows: usize,
    sb_max: usize,
    max_bytes: usize,
    // parser
    state: State,
    inter: [u8; 2],
    inter_len: usize,
    ignoring: bool,
    /// The first parameter was written with digits: `CSI 0 T` is not `CSI T`.
    first_digits: bool,
    param: u32,
    params: Params,
    osc: Vec<u8>,
    osc_overflow: bool,
    utf8: [u8; 4],
    utf8_len: usize,
    // retained output
    sb: VecDeque<Line>,
    sb_cost: usize,
    /// An emptied buffer of a line dropped from scrollback.
    spare: Vec<Cell>,
    truncated: bool,
    bytes_fed: u64,
    bell: u64,
    title: String,
    progress: Option<Progress>,
    styles: Vec<StyleKey>,
    style_ids: HashMap<StyleKey, u32>,
    /// Recently interned styles, direct-mapped: SGR sequences switch among a few pens, and
    /// the map's hash costs more than the rest of a write. Made at the first style interned
    /// (and dropped with the styles): most of a terminal's fixed size, which a store of many
    /// idle or plain-text terminals would otherwise pay for each.
    style_cache: Option<Box<[(StyleKey, u32); STYLE_CACHE]>>,
    /// The edits of recent SGRs of several parameters, direct-mapped by their bytes (zero
    /// padded to 16): progress bars and listings repeat a few colours. Made at the first one.
    sgr_memo: Option<Box<[(u128, PenEdit); SGR_MEMO]>>,
    /// Recent steps of one-code SGRs between known styles, direct-mapped: `key << 32 | to`,
    /// the key made of the style id before and the code (see [`Terminal::sgr_code`]). Output
    /// switches among a few pens (`ESC[32m` after `ESC[0m`, test dot after test dot), so the
    /// step is found rather than computed and the new style looked up. Made at the first one
    /// (and dropped with the styles, whose ids it holds).
    sgr_steps: Option<Box<[u64; SGR_STEPS]>>,
    /// Recent widths of non-ASCII characters, direct-mapped: `code point << 2 | width`. Made
    /// at the first such character (and dropped by a clear).
    width_cache: Option<Box<[u32; WIDTH_CACHE]>>,
    links: Vec<Arc<str>>,
    link_ids: HashMap<Arc<str>, u32>,
    clusters: Vec<Box<str>>,
    cluster_ids: HashMap<Box<str>, u32>,
    /// The clusters' UTF-8 bytes, together.
    cluster_bytes: usize,
    /// The interned links' UTF-8 bytes, together.
    link_bytes: usize,
    // screen
    /// The screen shown: every write goes here, so it is not looked up by which one it is.
    screen: VecDeque<Line>,
    /// The screen not shown: the primary one while the alternate one is, else the alternate
    /// one as last left (empty until first used): ?47 and ?1047 switch back to it.
    other: VecDeque<Line>,
    /// The alternate screen is shown.
    alt_shown: bool,
    row: usize,
    col: usize,
    pen: StyleKey,
    pen_id: Option<u32>,
    top: usize,
    bot: usize,
    autowrap: bool,
    saved: [Option<Saved>; 2],
    /// The last character printed, while nothing else has happened since.
    last: Option<char>,
    /// What REP repeats: the character printed just before the escape sequence now being
    /// read, as xterm keeps it (anything but printing in between forgets it).
    repeatable: Option<char>,
    /// DECOM: rows are addressed from the top margin and stay within the margins.
    origin: bool,
    /// Tab stops set by HTS/TBC, one flag per column; `None` until then: every 8 columns.
    tabs: Option<Vec<bool>>,
}

impl Terminal {
    /// A blank terminal. `cols: Some(0)` is treated as 1 and `rows: 0` as 1; sizes above
    /// [`MAX_COLS`] and [`MAX_ROWS`] as those.
    pub fn new(config: TerminalConfig) -> Terminal {
        let cols = config.cols.map(|c| c.clamp(1, MAX_COLS));
        let rows = config.rows.clamp(1, MAX_ROWS);
        let mut t = Terminal {
            cols,
            w: cols.unwrap_or(UNBOUNDED_COLS),
            rows,
            sb_max: config.scrollback,
            max_bytes: config.max_bytes,
            state: State::Ground,
            inter: [0; 2],
            inter_len: 0,
            ignoring: false,
            first_digits: false,
            param: 0,
            params: Params::default(),
            osc: Vec::new(),
            osc_overflow: false,
            utf8: [0; 4],
            utf8_len: 0,
            sb: VecDeque::new(),
            sb_cost: 0,
            spare: Vec::new(),
            truncated: false,
            bytes_fed: 0,
            bell: 0,
            title: String::new(),
            progress: None,
            styles: Vec::new(),
            style_ids: HashMap::new(),
            style_cache: None,
            sgr_memo: None,
            sgr_steps: None,
            width_cache: None,
            links: Vec::new(),
            link_ids: HashMap::new(),
            clusters: Vec::new(),
            cluster_ids: HashMap::new(),
            cluster_bytes: 0,
            link_bytes: 0,
            screen: VecDeque::new(),
            other: VecDeque::new(),
            alt_shown: false,
            row: 0,
            col: 0,
            pen: StyleKey::default(),
            pen_id: Some(0),
            top: 0,
            bot: 0,
            autowrap: true,
            saved: [None, None],
            last: None,
            repeatable: None,
            origin: false,
            tabs: None,
        };
        t.clear_all();
        t
    }

    fn clear_all(&mut self) {
        self.state = State::Ground;
        self.reset_params();
        self.osc = Vec::new();
        self.osc_overflow = false;
        self.utf8_len = 0;
        self.sb = VecDeque::new();
        self.sb_cost = 0;
        self.truncated = false;
        self.bytes_fed = 0;
        self.bell = 0;
        self.title = String::new();
        self.progress = None;
        self.styles = vec![StyleKey::default()];
        self.style_ids = HashMap::from_iter([(StyleKey::default(), 0)]);
        // Made again at the next style interned.
        self.style_cache = None;
        self.sgr_steps = None;
        self.links = vec![Arc::from("")];
        self.link_ids = HashMap::new();
        self.link_bytes = 0;
        self.clusters = Vec::new();
        self.cluster_ids = HashMap::new();
        self.cluster_bytes = 0;
        // The alternate screen; or the primary one, which the reset replaces anyway.
        self.other = VecDeque::new();
        self.soft_reset();
    }

    /// RIS: a fresh screen, cursor, pen and modes; scrollback and metadata stay. As in xterm,
    /// the alternate screen is cleared if shown, and kept as it is if not.
    fn soft_reset(&mut self) {
        if self.alt_shown {
            self.alt_shown = false;
            self.other = VecDeque::new();
        }
        self.screen = std::iter::repeat_with(Line::default)
            .take(self.rows)
            .collect();
        self.row = 0;
        self.col = 0;
        self.pen = StyleKey::default();
        self.pen_id = Some(0);
        self.top = 0;
        self.bot = self.rows - 1;
        self.autowrap = true;
        self.saved = [None, None];
        self.last = None;
        self.repeatable = None;
        self.origin = false;
        self.tabs = None;
    }

    /// DECSTR (`CSI ! p`), as xterm's soft reset: the margins, origin mode, autowrap and the
    /// rendition (not an OSC 8 link, as SGR 0) to their defaults, and this screen's saved
    /// cursor to home with them; the cursor, the screens, tab stops and scrollback stay.
    fn decstr(&mut self) {
        self.top = 0;
        self.bot = self.rows - 1;
        self.origin = false;
        self.autowrap = true;
        self.pen = StyleKey {
            link: self.pen.link,
            ..StyleKey::default()
        };
        self.pen_id = if self.pen == StyleKey::default() {
            Some(0)
        } else {
            None
        };
        let slot = usize::from(self.alt_shown);
        self.saved[slot] = Some(Saved {
            row: 0,
            col: 0,
            pen: self.pen,
            origin: false,
        });
    }

    fn reset_params(&mut self) {
        self.inter_len = 0;
        self.ignoring = false;
        self.first_digits = false;
        self.param = 0;
        self.params.clear();
    }

    /// Applies raw terminal bytes; any chunking gives the same result.
    pub fn feed(&mut self, data: &[u8]) {
        self.bytes_fed += data.len() as u64;
        self.advance(data);
    }

    /// Decodes one strict base64 chunk and feeds it; on error nothing is applied.
    pub fn feed_base64(&mut self, data: &[u8]) -> Result<(), TerminalDataError> {
        let bytes = decode_base64(data)?;
        self.feed(&bytes);
        Ok(())
    }

    /// Drops all state and starts from `snapshot` (the `terminal_update.output` rule).
    pub fn reset(&mut self, snapshot: &[u8]) {
        self.clear_all();
        self.feed(snapshot);
    }

    /// `reset` from a base64 snapshot; invalid base64 changes nothing.
    pub fn reset_base64(&mut self, data: &[u8]) -> Result<(), TerminalDataError> {
        let bytes = decode_base64(data)?;
        self.reset(&bytes);
        Ok(())
    }

    /// The configured width (`None` in transcript mode).
    pub fn cols(&self) -> Option<usize> {
        self.cols
    }
    /// The screen height.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// The title last set with OSC 0 or 2 (empty if never).
    pub fn title(&self) -> &str {
        &self.title
    }
    /// OSC 9;4 progress, `None` when never set or cleared.
    pub fn progress(&self) -> Option<Progress> {
        self.progress
    }
    /// BEL characters executed (not those ending an OSC).
    pub fn bell_count(&self) -> u64 {
        self.bell
    }
    /// Bytes applied since construction or the last reset.
    pub fn bytes_fed(&self) -> u64 {
        self.bytes_fed
    }
    /// True once scrollback lines were dropped to respect the limits.
    pub fn truncated(&self) -> bool {
        self.truncated
    }
    /// [`Terminal::retained_bytes`], once every screen row has given back the room it keeps
    /// beyond four times its cells or 256 cells (an empty row, all of it), and the buffer kept
    /// for the next line any beyond 128 cells: what a row holds is counted by its cells, so a
    /// row erased after holding many must not keep their memory. For a store, which settles
    /// each terminal it writes; a row cleared and written again between two settlements
    /// reuses its buffer.
    pub fn settle(&mut self) -> usize {
        for line in self.screen.iter_mut().chain(self.other.iter_mut()) {
            if line.cells.is_empty() {
                line.cells = Vec::new();
            } else {
                release_slack(&mut line.cells);
            }
        }
        if self.spare.capacity() > LINE_CAPACITY {
            self.spare = Vec::new();
        }
        self.retained_bytes()
    }

    /// What the terminal holds, in the units of `max_bytes`: its scrollback as it counts
    /// there; each screen row that holds cells as a scrollback line would count (its cells,
    /// a soft-wrapped row as wide as the views show it, plus 128); and 8 per style interned
    /// and 8 plus its UTF-8 length per grapheme cluster and per OSC 8 link (the tables that
    /// cells refer to); and the UTF-8 length of the title and of an OSC sequence cut short by
    /// the last chunk (the sequence up to 64 KiB; the title, decoded with U+FFFD for invalid
    /// bytes, up to three times that).
    pub fn retained_bytes(&self) -> usize {
        let rows = self.screen.iter().chain(self.other.iter());
        let rows_cost: usize = rows
            .map(|line| {
                let cost = self.line_cost(line);
                if cost == LINE_COST { 0 } else { cost }
            })
            .sum();
        self.sb_cost
            + rows_cost
            + INTERNED_COST * (self.styles.len() - 1)
            + INTERNED_COST * self.clusters.len()
            + self.cluster_bytes
            + INTERNED_COST * (self.links.len() - 1)
            + self.link_bytes
            + self.title.len()
            + self.osc.len()
    }

    /// Drops everything the terminal shows, scrollback and screens (their memory with it),
    /// with the styles, grapheme clusters and links that only cells referred to, and sets
    /// `truncated`; the cursor, modes, rendition (and its link), title and counters stay, as
    /// does a sequence cut short by the last chunk.
    pub fn drop_retained(&mut self) {
        self.sb = VecDeque::new();
        self.sb_cost = 0;
        self.spare = Vec::new();
        for line in self.screen.iter_mut().chain(self.other.iter_mut()) {
            *line = Line::default();
        }
        self.styles = vec![StyleKey::default()];
        self.style_ids = HashMap::from_iter([(StyleKey::default(), 0)]);
        self.style_cache = None;
        self.sgr_steps = None;
        self.width_cache = None;
        self.pen_id = None;
        self.clusters = Vec::new();
        self.cluster_ids = HashMap::new();
        self.cluster_bytes = 0;
        // The links the pen and the saved cursors still carry are kept, renumbered in that
        // order; the rest go.
        let old = std::mem::replace(&mut self.links, vec![Arc::from("")]);
        self.link_ids = HashMap::new();
        let mut relink = |id: u32| -> u32 {
            if id == 0 {
                return 0;
            }
            let uri = &old[id as usize];
            if let Some(&new) = self.link_ids.get(uri) {
                return new;
            }
            let new = id32(self.links.len());
            self.links.push(Arc::clone(uri));
            self.link_ids.insert(Arc::clone(uri), new);
            new
        };
        self.pen.link = relink(self.pen.link);
        for saved in self.saved.iter_mut().flatten() {
            saved.pen.link = relink(saved.pen.link);
        }
        self.link_bytes = self.links.iter().map(|uri| uri.len()).sum();
        self.truncated = true;
    }

    /// What [`Terminal::drop_retained`] would leave of [`Terminal::retained_bytes`]: the links
    /// the pen and the saved cursors carry (each once), the title and a pending OSC sequence.
    pub fn kept_bytes(&self) -> usize {
        let mut carried = [self.pen.link, 0, 0];
        for (slot, saved) in carried[1..].iter_mut().zip(&self.saved) {
            *slot = saved.map_or(0, |s| s.pen.link);
        }
        let mut kept = self.title.len() + self.osc.len();
        for (k, &id) in carried.iter().enumerate() {
            if id != 0 && !carried[..k].contains(&id) {
                kept += INTERNED_COST + self.links[id as usize].len();
            }
        }
        kept
    }

    /// (row, col) on the active screen when `cols` is set; col == cols means a pending wrap.
    pub fn cursor(&self) -> Option<(usize, usize)> {
        self.cols.map(|_| (self.row, self.col))
    }

    #[inline]
    fn grid(&mut self) -> &mut VecDeque<Line> {
        &mut self.screen
    }

    #[inline]
    fn grid_ref(&self) -> &VecDeque<Line> {
        &self.screen
    }

    /// The primary screen, whichever is shown.
    fn prim(&self) -> &VecDeque<Line> {
        if self.alt_shown {
            &self.other
        } else {
            &self.screen
        }
    }

    // ------------------------------------------------------------------ views

    #[inline]
    fn push_cell_text(&self, out: &mut String, ch: u32) {
        if ch < 0x80 {
            // Most cells: a byte, without a char's encoding.
            out.push(char::from(u8::try_from(ch).unwrap_or(b' ')));
        } else if let Some(c) = char::from_u32(ch) {
            // CONT and cluster ids are never valid chars.
            out.push(c);
        } else if ch != CONT {
            out.push_str(&self.clusters[(ch & !CLUSTER_BIT) as usize]);
        }
    }

    fn row_text(&self, out: &mut String, line: &Line) {
        out.reserve(line.cells.len());
        let mut rest = &line.cells[..];
        while !rest.is_empty() {
            // Runs of ASCII cells, most of any output, go in as bytes.
            // SAFETY: only bytes below 0x80 are added, each a whole UTF-8 character.
            let mut n = copy_ascii(rest, unsafe { out.as_mut_vec() });
            for c in &rest[n..] {
                // Character 0 (never printed) is not taken by `copy_ascii`: taken here.
                if c.ch() < 0x80 && c.ch() != 0 {
                    break;
                }
                self.push_cell_text(out, c.ch());
                n += 1;
            }
            rest = &rest[n..];
        }
    }

    /// Scrollback then the primary screen, each line's cells asked for a few lines before it
    /// comes: lines of scrollback live apart in memory, so a view that walks them would
    /// otherwise wait on each in turn.
    fn rows_ahead(&self) -> impl Iterator<Item = &Line> {
        let mut ahead = self
            .sb
            .iter()
            .chain(self.prim().iter())
            .skip(PREFETCH_LINES);
        self.sb
            .iter()
            .chain(self.prim().iter())
            .inspect(move |_| Self::prefetch_line(ahead.next()))
    }

    /// Asks for the first cells of `line` ahead of reading them.
    #[inline]
    fn prefetch_line(line: Option<&Line>) {
        if let Some(line) = line {
            let p = line.cells.as_ptr();
            for k in 0..line.cells.len().div_ceil(8).min(8) {
                prefetch(p.wrapping_add(8 * k));
            }
        }
    }

    /// The blanks that complete a soft-wrapped row to the full width (short of the last column
    /// when that column only pads a wide character that wrapped).
    fn wrap_pad(&self, line: &Line) -> usize {
        (self.w - usize::from(line.wide_wrap)).saturating_sub(line.cells.len())
    }

    /// Scrollback plus the primary screen as plain text: trailing blanks trimmed, soft-wrapped
    /// rows joined, trailing empty lines dropped.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    /// [`Terminal::text`] as its characters' code points, one per `u32`: what a caller that
    /// stores text at a fixed width per character (a Python `str`) copies or narrows, with no
    /// UTF-8 to encode and decode again.
    pub fn text_code_points(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.write_text(&mut out);
        out
    }

    fn write_text<O: TextOut>(&self, out: &mut O) {
        // At least a unit per cell and line: one allocation, not a doubling chain of copies.
        let size = self.sb.iter().chain(self.prim().iter());
        out.reserve(size.map(|l| l.cells.len() + 1).sum());
        // Where the logical line being built starts in `out`.
        let mut start = 0;
        for line in self.rows_ahead() {
            out.push_row(self, line);
            if line.wrapped {
                out.push_spaces(self.wrap_pad(line));
                continue;
            }
            out.trim_end_from(start, b' ');
            out.push_unit(b'\n');
            start = out.len();
        }
        out.trim_end_from(start, b' ');
        // Lines hold no newline of their own, so this drops exactly the trailing empty lines.
        out.trim_end_from(0, b'\n');
    }

    /// The logical lines of [`Terminal::text`].
    pub fn lines(&self) -> Vec<String> {
        let text = self.text();
        if text.is_empty() {
            return Vec::new();
        }
        text.split('\n').map(str::to_owned).collect()
    }

    /// The style with id `sid`, an id from [`Terminal::styled_lines`].
    pub fn style(&self, sid: u32) -> Style {
        let k = self.styles.get(sid as usize).copied().unwrap_or_default();
        Style {
            fg: color_out(k.fg),
            bg: color_out(k.bg),
            bold: k.flags & BOLD != 0,
            dim: k.flags & DIM != 0,
            italic: k.flags & ITALIC != 0,
            underline: k.flags & UNDERLINE != 0,
            inverse: k.flags & INVERSE != 0,
            strike: k.flags & STRIKE != 0,
            link: if k.link == 0 {
                None
            } else {
                Some(self.links[k.link as usize].clone())
            },
        }
    }

    /// Each logical line as runs of one style (adjacent equal styles merged). A line's
    /// trailing blanks are trimmed back to the last cell that can be seen: a non-blank, or a
    /// blank with a background colour, inverse, underline or strike-through (which `text`
    /// and `lines()` trim too). So a line's spans read as its `lines()` entry plus, at most,
    /// such blanks, and trailing lines holding only such blanks are rows here, not there.
    pub fn spans(&self) -> Vec<Vec<Span>> {
        // Each style in use made once, by id (ids are small and dense), and cloned per run.
        let mut styles: Vec<Option<Style>> = Vec::new();
        let mut out = Vec::with_capacity(self.view_rows());
        let all = self.each_styled_line(|text, runs| {
            let ends = runs.iter().skip(1).map(|r| r.0).chain([text.len()]);
            let mut row = Vec::with_capacity(runs.len());
            for (&(begin, sid), end) in runs.iter().zip(ends) {
                let i = sid as usize;
                if styles.len() <= i {
                    styles.resize_with(i + 1, || None);
                }
                let style = styles[i].get_or_insert_with(|| self.style(sid)).clone();
                row.push(Span {
                    text: text[begin..end].to_owned(),
                    style,
                });
            }
            out.push(row);
            Ok::<(), Infallible>(())
        });
        match all {
            Ok(()) => out,
        }
    }

    /// [`Terminal::spans`] in compact form: one text per line and style ids, so that a caller
    /// converts each style once rather than once per run.
    pub fn styled_lines(&self) -> Vec<StyledLine> {
        let mut out = Vec::with_capacity(self.view_rows());
        let all = self.each_styled_line(|text, runs| {
            out.push(StyledLine {
                text: text.to_owned(),
                runs: runs.to_vec(),
            });
            Ok::<(), Infallible>(())
        });
        match all {
            Ok(()) => out,
        }
    }

    /// How many rows the views walk, retained scrollback plus the primary screen: at least
    /// as many as they have lines (soft-wrapped rows join into one).
    pub fn view_rows(&self) -> usize {
        self.sb.len() + self.prim().len()
    }

    /// The lines of [`Terminal::styled_lines`] one at a time, each given to `line` as its text
    /// and runs in buffers that the next line reuses: a caller that converts each line as it
    /// comes needs no buffer for the whole view. Stops at the first error `line` returns.
    pub fn each_styled_line<E>(
        &self,
        mut line: impl FnMut(&str, &[(usize, u32)]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut out = StyledLine::default();
        // Lines without runs not given yet: only those that a line with runs follows are.
        let mut empty = 0;
        for row in self.rows_ahead() {
            // The style of the open run (a soft-wrapped row continues its line's); no style
            // has id `u32::MAX`.
            let mut open = out.runs.last().map_or(u32::MAX, |r| r.1);
            let cells = &row.cells[..];
            let mut k = 0;
            while k < cells.len() {
                let c = cells[k];
                if c.ch() != CONT && c.style() != open {
                    open = c.style();
                    out.runs.push((out.text.len(), open));
                }
                // SAFETY: only bytes below 0x80 are added, each a whole UTF-8 character.
                k += copy_ascii_of_style(&cells[k..], open, unsafe { out.text.as_mut_vec() });
                for c in &cells[k..] {
                    if c.ch() != CONT && (c.ch() < 0x80 || c.style() != open) {
                        break;
                    }
                    self.push_cell_text(&mut out.text, c.ch());
                    k += 1;
                }
            }
            if row.wrapped {
                let pad = self.wrap_pad(row);
                if pad > 0 {
                    if open != 0 {
                        out.runs.push((out.text.len(), 0));
                    }
                    out.text.extend(std::iter::repeat_n(' ', pad));
                }
                continue;
            }
            self.end_styled_line(&mut out, &mut empty, &mut line)?;
        }
        if !out.text.is_empty() {
            self.end_styled_line(&mut out, &mut empty, &mut line)?;
        }
        // Trailing lines without runs are not given.
        Ok(())
    }

    /// Trims the line built in `out` and gives it to `line` (after the lines without runs
    /// that `empty` counts, if it has runs), then empties `out` for the next.
    #[inline]
    fn end_styled_line<E>(
        &self,
        out: &mut StyledLine,
        empty: &mut usize,
        line: &mut impl FnMut(&str, &[(usize, u32)]) -> Result<(), E>,
    ) -> Result<(), E> {
        out.trim_blanks(&self.styles);
        if out.runs.is_empty() {
            *empty += 1;
        } else {
            for _ in 0..std::mem::take(empty) {
                line("", &[])?;
            }
            line(&out.text, &out.runs)?;
        }
        out.text.clear();
        out.runs.clear();
        Ok(())
    }

    /// The rows of the active screen, trailing blanks trimmed (`None` when `cols` is `None`).
    pub fn screen(&self) -> Option<Vec<String>> {
        self.cols?;
        Some(
            self.grid_ref()
                .iter()
                .map(|line| {
                    let mut s = String::new();
                    self.row_text(&mut s, line);
                    let keep = s.trim_end_matches(' ').len();
                    s.truncate(keep);
                    s
                })
                .collect(),
        )
    }

    // ----------------------------------------------------------------- parser

    fn advance(&mut self, data: &[u8]) {
        let n = data.len();
        let mut i = 0;
        while i < n {
            match self.state {
                State::Ground => {
                    i = self.ground(data, i);
                    if i == n {
                        return;
                    }
                }
                State::CsiEntry | State::CsiParam => i = self.csi_params(data, i),
                State::OscString => {
                    let ends = |b: u8| matches!(b, 0x07 | 0x18 | 0x1A | 0x1B);
                    // Most payloads hold no control byte but the one that ends them: found in
                    // one pass and copied whole. Other controls are dropped from the payload.
                    let ctl = data[i..]
                        .iter()
                        .position(|&b| b < 0x20)
                        .map_or(n, |p| p + i);
                    let clean = ctl == n || ends(data[ctl]);
                    let j = if clean {
                        ctl
                    } else {
                        data[ctl..]
                            .iter()
                            .position(|&b| ends(b))
                            .map_or(n, |p| p + ctl)
                    };
                    if j > i && !self.osc_overflow {
                        let payload = &data[i..j];
                        let keep = |b: &u8| *b >= 0x20;
                        let add = if clean {
                            payload.len()
                        } else {
                            payload.iter().filter(|b| keep(b)).count()
                        };
                        if self.osc.len() + add > MAX_OSC_BYTES {
                            self.osc_overflow = true;
                            self.osc = Vec::new();
                        } else if clean {
                            self.osc.extend_from_slice(payload);
                        } else {
                            self.osc.extend(payload.iter().copied().filter(keep));
                        }
                    }
                    if j == n {
                        return;
                    }
                    let b = data[j];
                    i = j + 1;
                    self.osc_end();
                    if b == 0x1B {
                        self.reset_params();
                        self.state = State::Escape;
                    } else {
                        self.state = State::Ground;
                    }
                }
                State::DcsPass | State::DcsIgnore | State::SosString => {
                    // Payloads of these strings are consumed and never stored.
                    match memchr::memchr3(0x18, 0x1A, 0x1B, &data[i..]) {
                        None => return,
                        Some(p) => {
                            let j = i + p;
                            i = j + 1;
                            if data[j] == 0x1B {
                                self.reset_params();
                                self.state = State::Escape;
                            } else {
                                self.state = State::Ground;
                            }
                        }
                    }
                }
                _ => {
                    self.step(data[i]);
                    i += 1;
                }
            }
        }
    }

    /// The ground state from `data[i..]` (not empty) until the state changes or the data ends;
    /// returns where to continue. Text, C0 controls and CSIs all stay in this loop.
    #[inline]
    fn ground(&mut self, data: &[u8], mut i: usize) -> usize {
        let n = data.len();
        loop {
            let mut j = i;
            let mut b = data[j];
            // Escapes often follow one another: no text between them, nothing to scan.
            if b < 0x20 {
                if self.utf8_len > 0 {
                    self.end_utf8();
                }
            } else if self.utf8_len == 0 {
                let (len, high) = scan_ascii(&data[i..]);
                if high {
                    j = self.print_text(data, i);
                    let Some(&next) = data.get(j) else {
                        return n;
                    };
                    b = next;
                    if self.utf8_len > 0 {
                        self.end_utf8();
                    }
                } else {
                    // Printing ASCII leaves no sequence pending: nothing to end.
                    if len > 0 {
                        self.put_ascii(&data[i..i + len]);
                    }
                    j = i + len;
                    let Some(&next) = data.get(j) else {
                        return n;
                    };
                    b = next;
                }
            } else {
                let (len, _) = scan_printable(&data[i..]);
                self.ground_run(&data[i..i + len]);
                j = i + len;
                let Some(&next) = data.get(j) else {
                    return n;
                };
                b = next;
                if self.utf8_len > 0 {
                    self.end_utf8();
                }
            }
            i = j + 1;
            if b != 0x1B {
                i = self.control(b, data, i);
                if i == n {
                    return n;
                }
                continue;
            }
            self.repeatable = self.last.take();
            // `ESC[0m`, a third of the escapes in coloured output, in one compare.
            if data.get(j..j + 4) == Some(b"\x1b[0m") {
                self.set_pen(self.reset_pen());
                i = j + 4;
                if i == n {
                    return n;
                }
                continue;
            }
            // Most escapes are CSIs: enter that state without a round through `step`, and an
            // OSC's (progress, links) too.
            if data.get(i) != Some(&b'[') {
                self.reset_params();
                self.state = State::Escape;
                if data.get(i) == Some(&b']') {
                    self.step(b']');
                    return i + 1;
                }
                return i;
            }
            // The other SGRs of one code of one or two digits (`ESC[1m`, `ESC[32m`), most of
            // the rest, without the general parse and dispatch of a short CSI.
            let code = match data.get(i + 1..i + 4) {
                Some(&[one @ b'0'..=b'9', b'm', _]) => Some((u16::from(one - b'0'), 3)),
                Some(&[tens @ b'0'..=b'9', ones @ b'0'..=b'9', b'm']) => {
                    Some((u16::from(tens - b'0') * 10 + u16::from(ones - b'0'), 4))
                }
                _ => None,
            };
            if let Some((code, len)) = code {
                self.sgr_code(code);
                i += len;
                if i == n {
                    return n;
                }
                continue;
            }
            if let Some(end) = self
                .short_csi(data, i + 1)
                .or_else(|| self.memo_sgr(data, i + 1))
                .or_else(|| self.plain_csi(data, i + 1))
            {
                i = end;
                if i == n {
                    return n;
                }
                continue;
            }
            self.reset_params();
            self.state = State::CsiEntry;
            i = self.csi_params(data, i + 1);
            if i == n || self.state != State::Ground {
                return i;
            }
        }
    }

    /// The C0 control `b` (not ESC) before `data[i..]`; returns where to continue. CR, most of
    /// them, is taken without a call, as `execute` does, and with what usually follows it.
    #[inline]
    fn control(&mut self, b: u8, data: &[u8], mut i: usize) -> usize {
        if b != b'\r' {
            self.execute(b);
            return i;
        }
        self.last = None;
        self.repeatable = None;
        self.col = 0;
        if data.get(i) == Some(&b'\n') {
            // CR LF: the LF's index keeps the cursor at column 0.
            self.index();
            i += 1;
        } else if data.get(i..i + 3) == Some(b"\x1b[K") {
            // `CR ESC[K`, how cargo and pip redraw a bar, in one step: at column 0 the erase
            // blanks the whole row, as `ESC[2K` does (REP was already forgotten).
            let row = self.row;
            self.grid()[row].clear();
            i += 3;
        }
        i
    }

    /// A whole CSI at `data[i..]` (after `ESC [`) of at most two digits and a final byte,
    /// executed as [`Self::plain_csi`] would without its loop: `ESC[0m`, `ESC[32m`, `ESC[K`,
    /// `ESC[2K` and `ESC[1G` are most of the escapes in a build's or an installer's output.
    /// `None`, having changed nothing, for anything else (and near the end of the data).
    #[inline]
    fn short_csi(&mut self, data: &[u8], i: usize) -> Option<usize> {
        let digit = |b: u8| u16::from(b - b'0');
        let (len, v, fin) = match *data.get(i..i + 3)? {
            [fin @ 0x40..=0x7E, _, _] => (1, 0, fin),
            [d @ b'0'..=b'9', fin @ 0x40..=0x7E, _] => (2, digit(d), fin),
            [d1 @ b'0'..=b'9', d2 @ b'0'..=b'9', fin @ 0x40..=0x7E] => {
                (3, 10 * digit(d1) + digit(d2), fin)
            }
            _ => return None,
        };
        match fin {
            // `ESC[m`; the ground loop takes SGRs of one code of one or two digits itself.
            b'm' if v == 0 => self.set_pen(self.reset_pen()),
            b'K' => {
                self.erase_line(v);
                // `ESC[2K ESC[1G`, how npm and other spinners clear their line, in one step
                // (only as `2K`: with `02K` the byte at `i + 2` is the `K`, not an ESC).
                if v == 2 && data.get(i + 2..i + 6) == Some(b"\x1b[1G") {
                    // As the second escape would: it forgets what REP repeats.
                    self.repeatable = None;
                    self.set_col(1);
                    return Some(i + 6);
                }
            }
            b'G' | b'`' => self.set_col(v),
            _ => self.csi_plain(fin, &[v], len > 1),
        }
        Some(i + len)
    }

    /// A whole CSI at `data[i..]` (after `ESC [`) made of at most 16 `;`-separated decimal
    /// parameters and a final byte, executed without the state machine; the common case.
    /// Returns `None`, having changed nothing, for anything else (private markers, colons,
    /// intermediates, controls, the end of the data): the state machine then takes it.
    #[inline]
    fn plain_csi(&mut self, data: &[u8], i: usize) -> Option<usize> {
        let rest = data.get(i..)?;
        let (vals, count, fin, len) = plain_params(rest)?;
        self.csi_plain(fin, &vals[..count], rest[0].is_ascii_digit());
        Some(i + len)
    }

    /// An SGR at `data[i..]` (after `ESC [`) of up to 15 bytes of `;`-separated decimal
    /// parameters, applied as the edit it was last seen to make: an SGR of several parameters
    /// (colours, bold and a colour) is parsed once, and then found by its bytes whatever the
    /// pen. `None`, having changed nothing, for anything else, and near the end of the data.
    #[inline]
    fn memo_sgr(&mut self, data: &[u8], i: usize) -> Option<usize> {
        let bytes: &[u8; 16] = data.get(i..i + 16)?.try_into().ok()?;
        let len = param_bytes(bytes);
        if len == 16 || bytes[len] != b'm' {
            return None;
        }
        // The parameters' bytes, the rest zeroed: a key no other SGR has (parameter bytes
        // are never zero), and never 0, the key of an empty slot, as `len > 0` here (the
        // final byte first is a short CSI).
        let key = u128::from_le_bytes(*bytes) & (u128::MAX >> (8 * (16 - len)));
        let h = (u64::try_from(key & u128::from(u64::MAX)).unwrap_or(0)
            ^ u64::try_from(key >> 64).unwrap_or(0))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let slot = usize::try_from(h >> (64 - SGR_MEMO.trailing_zeros())).unwrap_or(0);
        let memo = self
            .sgr_memo
            .get_or_insert_with(|| Box::new([(0, PenEdit::default()); SGR_MEMO]));
        let edit = if memo[slot].0 == key {
            memo[slot].1
        } else {
            let (vals, count, _, _) = plain_params(bytes)?;
            let edit = PenEdit::of(&vals[..count]);
            memo[slot] = (key, edit);
            edit
        };
        self.set_pen(edit.apply(self.pen));
        Some(i + len + 1)
    }

    /// An SGR of the one code `code` (below 100). From a pen whose style id is known, the step
    /// is remembered by that id and the code, once the style it leads to is known too (never
    /// interned here: a style gets its id when something is written in it, as ever). An id
    /// names its style exactly while the table has room: once full, new pens write as the
    /// default style (id 0), and no step is taken or remembered.
    #[inline]
    fn sgr_code(&mut self, code: u16) {
        let from = match self.pen_id {
            Some(id) if self.styles.len() < MAX_STYLES => id,
            _ => {
                self.set_pen(sgr1(self.pen, code));
                return;
            }
        };
        // Ids are below 65,536 and codes below 128: the key is never 0, an empty slot's.
        let key = 1 << 31 | from << 7 | u32::from(code);
        let slot =
            usize::try_from(key.wrapping_mul(0x9E37_79B1) >> (32 - SGR_STEPS.trailing_zeros()))
                .unwrap_or(0);
        if let Some(steps) = &self.sgr_steps {
            let step = steps[slot];
            if step >> 32 == u64::from(key) {
                #[allow(clippy::cast_possible_truncation, reason = "the low half is the id")]
                let to = step as u32;
                self.pen = self.styles[to as usize];
                self.pen_id = Some(to);
                return;
            }
        }
        self.set_pen(sgr1(self.pen, code));
        // The new pen's id, when it is known without interning it: unchanged, the default, or
        // found in the cache of recent styles.
        if self.pen_id.is_none() {
            let cached = self.style_cache.as_ref().map(|c| c[self.pen.cache_slot()]);
            match cached {
                Some((pen, id)) if pen == self.pen => self.pen_id = Some(id),
                _ => return,
            }
        }
        let Some(to) = self.pen_id else { return };
        let steps = self
            .sgr_steps
            .get_or_insert_with(|| Box::new([0; SGR_STEPS]));
        steps[slot] = u64::from(key) << 32 | u64::from(to);
    }

    /// The pen after an SGR: its style id is looked up again only when it changed.
    #[inline]
    fn set_pen(&mut self, new: StyleKey) {
        if new != self.pen {
            self.pen = new;
            // The default style is always id 0; `ESC[0m` is the most common SGR.
            self.pen_id = if new == StyleKey::default() {
                Some(0)
            } else {
                None
            };
        }
    }

    /// The pen after `ESC[0m`: every attribute off, the OSC 8 link kept (SGR does not end it).
    #[inline]
    fn reset_pen(&self) -> StyleKey {
        StyleKey {
            link: self.pen.link,
            ..StyleKey::default()
        }
    }

    fn csi_plain(&mut self, fin: u8, vals: &[u16], first_digits: bool) {
        if fin == b'm' {
            let new = if vals == [0] {
                // `ESC[0m`, the most common SGR by far.
                self.reset_pen()
            } else {
                sgr(self.pen, &Plain(vals))
            };
            self.set_pen(new);
            return;
        }
        match (fin, vals) {
            (b'K', &[mode]) => self.erase_line(mode),
            (b'G' | b'`', &[col]) => self.set_col(col),
            _ => {
                self.reset_params();
                self.first_digits = first_digits;
                for &v in vals {
                    self.params.push(v);
                }
                self.csi(fin);
            }
        }
    }

    /// The CSI entry and parameter states over `data[i..]`, the transitions of [`Self::step`]
    /// for the bytes a CSI usually holds, without a dispatch per byte. Any other byte goes to
    /// `step`. Returns where to continue.
    fn csi_params(&mut self, data: &[u8], mut i: usize) -> usize {
        if self.state == State::CsiEntry {
            let Some(&b) = data.get(i) else { return i };
            match b {
                b @ 0x3C..=0x3F => {
                    self.collect(b);
                    self.state = State::CsiParam;
                    i += 1;
                }
                0x30..=0x3B | 0x40..=0x7E => {}
                b => {
                    self.step(b);
                    return i + 1;
                }
            }
        }
        while let Some(&b) = data.get(i) {
            i += 1;
            match b {
                b'0'..=b'9' => self.param_digit(b),
                b';' => self.param_next(),
                b':' => self.param_sub(),
                0x40..=0x7E => {
                    self.csi_end(b);
                    return i;
                }
                _ => {
                    self.state = State::CsiParam;
                    self.step(b);
                    return i;
                }
            }
            self.state = State::CsiParam;
        }
        i
    }

    /// Printable bytes (no C0, no DEL) in the ground state, through the UTF-8 decoder. What
    /// stays pending at the end of a run is what `CPython`'s incremental decoder buffers: a valid
    /// but incomplete sequence, or ED followed by A0-BF (a truncated surrogate, a `CPython` quirk;
    /// the final text is the same, only the moment the U+FFFDs appear differs).
    fn ground_run(&mut self, run: &[u8]) {
        let combined: Vec<u8>;
        let mut run = run;
        if self.utf8_len > 0 {
            // Rare (a chunk boundary split a character), so a copy is fine.
            combined = [&self.utf8[..self.utf8_len], run].concat();
            self.utf8_len = 0;
            run = &combined;
        }
        loop {
            run = &run[self.print_utf8(run)..];
            if run.is_empty() {
                return;
            }
            // An invalid or incomplete sequence starts here: the standard decoder says which.
            match std::str::from_utf8(run) {
                Ok(s) => {
                    self.print_str(s);
                    return;
                }
                Err(e) => {
                    let v = e.valid_up_to();
                    if v > 0 {
                        let s = std::str::from_utf8(&run[..v]).unwrap_or_default();
                        self.print_str(s);
                    }
                    let rest = &run[v..];
                    let surrogate_tail =
                        rest.len() == 2 && rest[0] == 0xED && (0xA0..=0xBF).contains(&rest[1]);
                    match e.error_len() {
                        Some(l) if !surrogate_tail => {
                            self.print_str("\u{FFFD}");
                            run = &run[v + l..];
                        }
                        _ => {
                            self.utf8[..rest.len()].copy_from_slice(rest);
                            self.utf8_len = rest.len();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// The printable run at `data[i..]`, which holds a byte above 0x7F, with no UTF-8 sequence
    /// pending; returns where it ends. The decoder goes as far as the text is valid, and stops
    /// at a control as at the end; an invalid or incomplete sequence there takes the rest of
    /// the run through [`Self::ground_run`].
    #[inline]
    fn print_text(&mut self, data: &[u8], i: usize) -> usize {
        let p = i + self.print_utf8(&data[i..]);
        match data.get(p) {
            Some(&b) if b >= 0x20 && b != 0x7F => {
                let (len, _) = scan_printable(&data[p..]);
                self.ground_run(&data[p..p + len]);
                p + len
            }
            _ => p,
        }
    }

    /// Ends an incomplete UTF-8 sequence (one U+FFFD, or two for a truncated surrogate), as
    /// `CPython`'s final decode does: a control byte cuts it, and so does the end of a one-shot
    /// buffer.
    #[cold]
    fn end_utf8(&mut self) {
        let pending = self.utf8;
        let k = self.utf8_len;
        self.utf8_len = 0;
        let text = String::from_utf8_lossy(&pending[..k]).into_owned();
        self.print_str(&text);
    }

    fn anywhere(&mut self, b: u8) {
        if b == 0x1B {
            self.reset_params();
            self.state = State::Escape;
        } else if b == 0x18 || b == 0x1A {
            self.state = State::Ground;
        }
    }

    fn collect(&mut self, b: u8) {
        if self.inter_len == 2 {
            self.ignoring = true;
        } else {
            self.inter[self.inter_len] = b;
            self.inter_len += 1;
        }
    }

    fn param_digit(&mut self, b: u8) {
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.first_digits |= self.params.is_blank();
            self.param = (self.param * 10 + u32::from(b - b'0')).min(65535);
        }
    }

    fn param_next(&mut self) {
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.params.push(param16(self.param));
            self.param = 0;
        }
    }

    fn param_sub(&mut self) {
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.params.extend(param16(self.param));
            self.param = 0;
        }
    }

    fn step(&mut self, b: u8) {
        let state = self.state;
        if b < 0x20 {
            if b == 0x18 || b == 0x1A || b == 0x1B {
                self.anywhere(b);
            } else if matches!(
                state,
                State::Escape
                    | State::EscInter
                    | State::CsiEntry
                    | State::CsiParam
                    | State::CsiInter
                    | State::CsiIgnore
            ) {
                // ESC and CSI states execute C0 controls in passing; DCS entry states ignore them.
                self.execute(b);
            }
            return;
        }
        if b >= 0x7F {
            return;
        }
        match state {
            State::Escape => match b {
                0x20..=0x2F => {
                    self.collect(b);
                    self.state = State::EscInter;
                }
                b'[' => self.state = State::CsiEntry,
                b']' => {
                    self.osc.clear();
                    self.osc_overflow = false;
                    self.state = State::OscString;
                }
                b'P' => self.state = State::DcsEntry,
                b'X' | b'^' | b'_' => self.state = State::SosString,
                _ => {
                    self.state = State::Ground;
                    self.esc_dispatch(b);
                }
            },
            State::EscInter => {
                if b < 0x30 {
                    self.collect(b);
                } else {
                    self.state = State::Ground;
                    self.esc_dispatch(b);
                }
            }
            State::CsiEntry | State::CsiParam => match b {
                0x20..=0x2F => {
                    self.collect(b);
                    self.state = State::CsiInter;
                }
                b'0'..=b'9' => {
                    self.param_digit(b);
                    self.state = State::CsiParam;
                }
                b':' => {
                    self.param_sub();
                    self.state = State::CsiParam;
                }
                b';' => {
                    self.param_next();
                    self.state = State::CsiParam;
                }
                0x3C..=0x3F => {
                    if state == State::CsiEntry {
                        self.collect(b);
                        self.state = State::CsiParam;
                    } else {
                        self.state = State::CsiIgnore;
                    }
                }
                _ => self.csi_end(b),
            },
            State::CsiInter => match b {
                0x20..=0x2F => self.collect(b),
                0x30..=0x3F => self.state = State::CsiIgnore,
                _ => self.csi_end(b),
            },
            State::CsiIgnore if b >= 0x40 => self.state = State::Ground,
            State::DcsEntry | State::DcsParam => match b {
                0x20..=0x2F => self.state = State::DcsInter,
                0x30..=0x3B => self.state = State::DcsParam,
                0x3C..=0x3F => {
                    self.state = if state == State::DcsEntry {
                        State::DcsParam
                    } else {
                        State::DcsIgnore
                    };
                }
                _ => self.state = State::DcsPass,
            },
            State::DcsInter => match b {
                0x20..=0x2F => {}
                0x30..=0x3F => self.state = State::DcsIgnore,
                _ => self.state = State::DcsPass,
            },
            _ => {}
        }
    }

    fn csi_end(&mut self, fin: u8) {
        self.state = State::Ground;
        if self.params.is_full() {
            self.ignoring = true;
        } else {
            self.params.push(param16(self.param));
        }
        if !self.ignoring {
            self.csi(fin);
        }
    }

    fn osc_end(&mut self) {
        if !self.osc_overflow {
            let payload = std::mem::take(&mut self.osc);
            self.osc_dispatch(&payload);
            // A buffer that held a long sequence is released: one title of 64 KiB must not
            // pin 64 KiB in every terminal that saw one.
            if payload.capacity() <= OSC_KEPT_CAPACITY {
                self.osc = payload;
            }
        }
        self.osc.clear();
        self.osc_overflow = false;
    }

    // ---------------------------------------------------------------- actions

    fn execute(&mut self, b: u8) {
        self.last = None;
        self.repeatable = None;
        match b {
            0x0A..=0x0C => {
                self.index();
                if self.cols.is_none() {
                    self.col = 0;
                }
            }
            0x0D => self.col = 0,
            // From a pending wrap, back from the last column (xterm's CursorBack).
            0x08 => self.col = self.edit_col().saturating_sub(1),
            // xterm's TabToNextStop keeps a pending wrap, so HT moves only short of it.
            0x09 if self.col < self.w => self.col = self.next_tab(self.col),
            0x07 => self.bell += 1,
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, fin: u8) {
        if self.ignoring {
            return;
        }
        match (&self.inter[..self.inter_len], fin) {
            ([], b'7') => self.save_cursor(),
            ([], b'8') => self.restore_cursor(),
            ([], b'D') => self.index(),
            ([], b'E') => {
                self.col = 0;
                self.index();
            }
            ([], b'M') => self.reverse_index(),
            ([], b'H') => {
                let col = self.edit_col();
                self.tab_stops()[col] = true;
            }
            ([], b'c') => self.soft_reset(),
            ([b'#'], b'8') => {
                // DECALN: fill the screen with 'E' (a transcript, with no width, the 80
                // columns of the VT100 it tests), then, as xterm, leave origin mode and the
                // rendition (not a link).
                let w = if self.cols.is_some() {
                    self.w
                } else {
                    DECALN_TRANSCRIPT_COLS
                };
                let rows = self.rows;
                let g = self.grid();
                for line in g.iter_mut().take(rows) {
                    *line = Line {
                        cells: vec![Cell::new(u32::from(b'E'), 0); w],
                        ..Line::default()
                    };
                }
                self.top = 0;
                self.bot = self.rows - 1;
                self.row = 0;
                self.col = 0;
                self.origin = false;
                self.pen = StyleKey {
                    link: self.pen.link,
                    ..StyleKey::default()
                };
                self.pen_id = None;
            }
            _ => {}
        }
    }

    /// An OSC's payload, read as bytes: its fields are split at `;` bytes, which no invalid
    /// UTF-8 sequence takes in, so each text field decodes by itself as it would in the whole
    /// decoded payload, and the numeric ones (progress) need no decoding.
    fn osc_dispatch(&mut self, payload: &[u8]) {
        let Some((num, rest)) = split_field(payload) else {
            return;
        };
        match num {
            // A fresh string: a short title after a long one must not keep the long one's
            // capacity, which the store's count would not see.
            b"0" | b"2" => self.title = String::from(&*decode_lossy(rest)),
            b"8" => {
                let Some((_params, uri)) = split_field(rest) else {
                    return;
                };
                let uri = decode_lossy(uri);
                let uri = &*uri;
                let mut link = 0;
                if !uri.is_empty() && uri.len() <= MAX_LINK_BYTES {
                    link = self.link_ids.get(uri).copied().unwrap_or(0);
                    if link == 0 && self.links.len() <= MAX_LINKS {
                        link = id32(self.links.len());
                        let arc: Arc<str> = Arc::from(uri);
                        self.links.push(arc.clone());
                        self.link_ids.insert(arc, link);
                        self.link_bytes += uri.len();
                    }
                }
                if link != self.pen.link {
                    self.pen.link = link;
                    self.pen_id = None;
                }
            }
            b"9" => {
                let mut fields = split_fields(rest);
                if fields.next() != Some(b"4") {
                    return;
                }
                let state = match fields.next() {
                    Some(f) => parse_uint(f),
                    None => Some(0),
                };
                match state {
                    Some(0) => self.progress = None,
                    Some(3) => {
                        self.progress = Some(Progress {
                            state: 3,
                            percent: None,
                        });
                    }
                    Some(s @ (1 | 2 | 4)) => {
                        let pct = fields
                            .next()
                            .and_then(parse_uint)
                            .map(|p| u8::try_from(p.min(100)).unwrap_or(100));
                        self.progress = Some(Progress {
                            state: u8::try_from(s).unwrap_or(0),
                            percent: pct,
                        });
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    #[inline]
    fn style_id(&mut self) -> u32 {
        if let Some(id) = self.pen_id {
            return id;
        }
        let slot = self.pen.cache_slot();
        if let Some(cache) = &self.style_cache {
            let (key, id) = cache[slot];
            if key == self.pen {
                self.pen_id = Some(id);
                return id;
            }
        }
        self.intern_pen(slot)
    }

    #[cold]
    #[inline(never)]
    fn intern_pen(&mut self, slot: usize) -> u32 {
        let key = self.pen;
        let id = match self.style_ids.get(&key) {
            Some(&id) => id,
            None if self.styles.len() >= MAX_STYLES => 0,
            None => {
                let id = id32(self.styles.len());
                self.styles.push(key);
                self.style_ids.insert(key, id);
                id
            }
        };
        if id != 0 || key == StyleKey::default() {
            let cache = self
                .style_cache
                .get_or_insert_with(|| Box::new([(StyleKey::default(), 0); STYLE_CACHE]));
            cache[slot] = (key, id);
        }
        self.pen_id = Some(id);
        id
    }

    fn save_cursor(&mut self) {
        let slot = usize::from(self.alt_shown);
        self.saved[slot] = Some(Saved {
            row: self.row,
            col: self.col,
            pen: self.pen,
            origin: self.origin,
        });
    }

    fn restore_cursor(&mut self) {
        let slot = usize::from(self.alt_shown);
        let s = self.saved[slot].unwrap_or(Saved {
            row: 0,
            col: 0,
            pen: StyleKey::default(),
            origin: false,
        });
        self.row = s.row;
        self.col = s.col;
        self.pen = s.pen;
        self.origin = s.origin;
        self.pen_id = None;
        if self.origin {
            // As xterm (`CursorSet`): in origin mode the cursor stays above the bottom margin
            // set since; a row above the top margin stays where it was.
            self.row = self.row.min(self.bot);
        }
    }

    // ------------------------------------------------------------------ print

    #[inline]
    fn put_ascii(&mut self, bytes: &[u8]) {
        let Some(&b) = bytes.last() else { return };
        self.last = Some(char::from(b));
        let col = self.col;
        let end = col + bytes.len();
        if end < self.w {
            // Short of the margin, so no wrap: most runs of output.
            self.write(col, bytes);
            self.col = end;
            return;
        }
        self.put_narrow(bytes);
    }

    /// The decoder's slow paths (invalid sequences, a character split between chunks) print
    /// through here: one copy of [`Self::print_utf8`] for them, out of the ground loop.
    #[inline(never)]
    fn print_str(&mut self, s: &str) {
        self.print_utf8(s.as_bytes());
    }

    /// Width of a non-ASCII printable code point: 0 to join the previous cell, 1, 2, or 3 for
    /// a C1 code point, which is dropped.
    #[inline]
    fn width_of(&mut self, o: u32) -> usize {
        if o < 0xAD {
            return if o < 0xA0 { 3 } else { 1 };
        }
        let slot = o as usize % WIDTH_CACHE;
        if let Some(cache) = &self.width_cache {
            let e = cache[slot];
            if e >> 2 == o {
                return (e & 3) as usize;
            }
        }
        let w = char::from_u32(o).map_or(1, char_width);
        let cache = self
            .width_cache
            .get_or_insert_with(|| Box::new([0; WIDTH_CACHE]));
        cache[slot] = o << 2 | id32(w);
        w
    }

    /// Prints the longest valid UTF-8 prefix of `bytes` up to a C0 control or DEL, and returns
    /// its length.
    /// Narrow and wide characters are gathered into a run of cell codes (a wide character is
    /// its code point then [`CONT`]); the buffer only bounds a run's length.
    #[allow(
        clippy::inline_always,
        reason = "the ground loop's call of it cost a frame and its constants every run"
    )]
    #[inline(always)]
    fn print_utf8(&mut self, bytes: &[u8]) -> usize {
        const RUN: usize = 64;
        let end = bytes.len();
        // Not zeroed (a run's fixed cost): `buf[..k]` is always initialized, as every cell
        // code is written before `k` covers it (`widen_ascii` initializes at least the length
        // it returns).
        let mut buf = [MaybeUninit::<u32>::uninit(); RUN];
        let mut k = 0;
        let mut has_wide = false;
        // The last three-byte sequence decoded, as (bytes, code point, width): bars and rules
        // repeat one character.
        let mut memo = (0u32, 0u32, 0usize);
        let mut i = 0;
        while i < end {
            if k + 2 > RUN {
                // SAFETY: `buf[..k]` is initialized.
                self.put_cells(unsafe { assume_init(&buf[..k]) }, has_wide);
                k = 0;
                has_wide = false;
            }
            let b0 = bytes[i];
            if b0 < 0x20 {
                break; // a control, as after a bar drawn before an escape
            }
            if b0 < 0x80 {
                // A stretch of ASCII, as far as the buffer has room.
                let m = widen_ascii(&bytes[i..], &mut buf[k..]);
                k += m;
                i += m;
                // Short of the buffer's end, a byte below 0x80 stopped it: a control.
                if k < RUN && bytes.get(i).is_some_and(|&b| b < 0x80) {
                    break;
                }
                continue;
            }
            let (cp, width) = if b0 & 0xF0 == 0xE0 && i + 2 < end {
                let key =
                    u32::from(b0) | u32::from(bytes[i + 1]) << 8 | u32::from(bytes[i + 2]) << 16;
                if key != memo.0 {
                    // Box drawing, CJK and most symbols: only overlongs and surrogates are
                    // invalid once the continuation bytes are.
                    if bytes[i + 1] & 0xC0 != 0x80 || bytes[i + 2] & 0xC0 != 0x80 {
                        break;
                    }
                    let o = u32::from(b0 & 0x0F) << 12
                        | u32::from(bytes[i + 1] & 0x3F) << 6
                        | u32::from(bytes[i + 2] & 0x3F);
                    if o < 0x800 || (0xD800..0xE000).contains(&o) {
                        break;
                    }
                    memo = (key, o, self.width_of(o));
                }
                i += 3;
                (memo.1, memo.2)
            } else {
                let Some((o, len)) = decode_utf8(&bytes[i..]) else {
                    break;
                };
                i += len;
                (o, self.width_of(o))
            };
            match width {
                1 => {
                    buf[k] = MaybeUninit::new(cp);
                    k += 1;
                    // The same character again: a bar or a rule (a look at its first byte
                    // first, for the spinners and symbols that come one at a time).
                    if b0 & 0xF0 == 0xE0 && bytes.get(i) == Some(&b0) {
                        let reps = repeats_of_3(bytes, i, RUN - k);
                        buf[k..k + reps].fill(MaybeUninit::new(cp));
                        k += reps;
                        i += 3 * reps;
                    }
                }
                2 => {
                    buf[k] = MaybeUninit::new(cp);
                    buf[k + 1] = MaybeUninit::new(CONT);
                    k += 2;
                    has_wide = true;
                }
                0 => {
                    if k > 0 {
                        // SAFETY: `buf[..k]` is initialized.
                        self.put_cells(unsafe { assume_init(&buf[..k]) }, has_wide);
                        k = 0;
                        has_wide = false;
                    }
                    // xterm's REP repeats nothing after a zero-width character.
                    self.last = None;
                    self.combine(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                }
                _ => {} // C1 code points are never printed
            }
        }
        if k > 0 {
            // SAFETY: `buf[..k]` is initialized.
            self.put_cells(unsafe { assume_init(&buf[..k]) }, has_wide);
        }
        i
    }

    /// Writes a run of cell codes from [`Self::print_utf8`] (not empty), which prints its
    /// last character: that, not each character as it is decoded, is what REP repeats.
    #[inline]
    fn put_cells(&mut self, run: &[u32], has_wide: bool) {
        if let [.., before, last] = *run {
            self.last = char::from_u32(if last == CONT { before } else { last });
        } else if let [only] = *run {
            self.last = char::from_u32(only);
        }
        let col = self.col;
        let end = col + run.len();
        if end < self.w {
            // Short of the margin: no wrap, and wide characters fit as they are.
            self.write(col, run);
            self.col = end;
            return;
        }
        self.put_run(run, has_wide);
    }

    /// Writes a run of cell codes from [`Self::print_utf8`]: at once when it fits on the row,
    /// else character by character (narrow stretches, then each wide character).
    #[inline]
    fn put_run(&mut self, run: &[u32], has_wide: bool) {
        if !has_wide || self.col + run.len() <= self.w {
            self.put_narrow(run);
        } else {
            self.put_wrapping_wide(run);
        }
    }

    /// [`Self::put_run`] of a run with wide characters that does not fit on the row.
    #[inline(never)]
    fn put_wrapping_wide(&mut self, run: &[u32]) {
        let mut start = 0;
        let mut j = 0;
        while j < run.len() {
            if run.get(j + 1) == Some(&CONT) {
                if start < j {
                    self.put_narrow(&run[start..j]);
                }
                self.put_wide(run[j]);
                j += 2;
                start = j;
            } else {
                j += 1;
            }
        }
        if start < run.len() {
            self.put_narrow(&run[start..]);
        }
    }

    /// Soft-wraps to the start of the next row; `wide`: early, for a wide character that the
    /// last column could not hold.
    fn wrap(&mut self, wide: bool) {
        let row = self.row;
        let line = &mut self.grid()[row];
        line.wrapped = true;
        line.wide_wrap = wide;
        self.index();
        self.col = 0;
    }

    /// Writes narrow characters at the cursor, wrapping as needed; the same as writing them one
    /// at a time.
    #[inline]
    fn put_narrow<T: CellChars>(&mut self, chars: &[T]) {
        let w = self.w;
        let col = self.col;
        if col + chars.len() <= w && !chars.is_empty() {
            // Fits without wrapping: the common case.
            self.write(col, chars);
            let col = col + chars.len();
            self.col = if col < w || self.autowrap { col } else { w - 1 };
            return;
        }
        let mut rest = chars;
        while !rest.is_empty() {
            let mut col = self.col;
            if col >= w {
                if self.autowrap {
                    self.wrap(false);
                    col = 0;
                } else {
                    col = w - 1;
                }
            }
            let room = w - col;
            if rest.len() > room && !self.autowrap {
                // Without autowrap the rest overwrites the last column: the final one stays.
                if room > 1 {
                    self.write(col, &rest[..room - 1]);
                }
                self.write(w - 1, &rest[rest.len() - 1..]);
                self.col = w - 1;
                return;
            }
            let k = rest.len().min(room);
            self.write(col, &rest[..k]);
            rest = &rest[k..];
            col += k;
            self.col = if col < w || self.autowrap { col } else { w - 1 };
        }
    }

    /// Overwrites cells from `col` with `text` (not empty) in the pen's style.
    #[allow(
        clippy::inline_always,
        reason = "in the ASCII-run path it is most of the work"
    )]
    #[inline(always)]
    fn write<T: CellChars>(&mut self, col: usize, text: &[T]) {
        let sid = self.style_id();
        let row = self.row;
        let cells = &mut self.grid()[row].cells;
        let end = col + text.len();
        let have = cells.len();
        if end <= have {
            // Redrawing over existing cells: progress bars and spinners.
            split(cells, col);
            split(cells, end);
            fill(&mut cells[col..end], text, sid);
        } else if col >= have {
            cells.resize(col, BLANK);
            extend(cells, text, sid);
        } else {
            split(cells, col);
            fill(&mut cells[col..have], text, sid);
            extend(cells, &text[have - col..], sid);
        }
    }

    fn put_wide(&mut self, ch: u32) {
        let w = self.w;
        if w < 2 {
            return;
        }
        let mut col = self.col;
        if col >= w {
            if self.autowrap {
                self.wrap(false);
                col = 0;
            } else {
                col = w - 1;
            }
        }
        if col == w - 1 {
            if self.autowrap {
                // It does not fit: the last column is left as it is and the character wraps.
                self.wrap(true);
                col = 0;
            } else {
                col = w - 2;
            }
        }
        let sid = self.style_id();
        let row = self.row;
        let cells = &mut self.grid()[row].cells;
        if col > cells.len() {
            cells.resize(col, BLANK);
        } else {
            split(cells, col);
        }
        split(cells, col + 2);
        if cells.len() < col + 2 {
            cells.resize(col + 2, BLANK);
        }
        cells[col] = Cell::new(ch, sid);
        cells[col + 1] = Cell::new(CONT, sid);
        col += 2;
        self.col = if col < w || self.autowrap { col } else { w - 1 };
    }

    fn combine(&mut self, ch: char) {
        if self.col == 0 {
            return; // nothing to join at the start of a row
        }
        let mut x = self.col - 1;
        let row = self.row;
        let line = &mut self.screen[row];
        let have = line.cells.len();
        if x < have && line.cells[x].ch() == CONT && x > 0 {
            x -= 1;
        }
        if x >= have {
            line.cells.resize(x + 1, BLANK);
        }
        let old = line.cells[x].ch();
        // The cluster with `ch` joined, built on the stack: most joins find it interned.
        let mut buf = [0u8; MAX_CLUSTER_CHARS * 4];
        let mut len;
        if old & CLUSTER_BIT != 0 && old != CONT {
            let cluster = &self.clusters[(old & !CLUSTER_BIT) as usize];
            if cluster.chars().count() >= MAX_CLUSTER_CHARS {
                return;
            }
            len = cluster.len();
            buf[..len].copy_from_slice(cluster.as_bytes());
        } else {
            len = char::from_u32(old)
                .unwrap_or(' ')
                .encode_utf8(&mut buf)
                .len();
        }
        len += ch.encode_utf8(&mut buf[len..]).len();
        let Ok(new) = std::str::from_utf8(&buf[..len]) else {
            return;
        };
        let id = if let Some(&id) = self.cluster_ids.get(new) {
            id
        } else {
            if self.clusters.len() >= MAX_CLUSTERS {
                return;
            }
            let id = id32(self.clusters.len());
            let boxed: Box<str> = Box::from(new);
            self.cluster_bytes += boxed.len();
            self.clusters.push(boxed.clone());
            self.cluster_ids.insert(boxed, id);
            id
        };
        self.screen[row].cells[x].set_ch(CLUSTER_BIT | id);
    }

    // -------------------------------------------------------------- scrolling

    /// Ends a pending wrap, leaving the cursor on the last column: xterm's `ResetWrap`, which
    /// every vertical move, erase and character insertion or deletion does.
    #[inline]
    fn reset_wrap(&mut self) {
        self.col = self.edit_col();
    }

    fn index(&mut self) {
        self.reset_wrap();
        if self.row == self.bot {
            self.scroll_up(1);
        } else if self.row < self.rows - 1 {
            self.row += 1;
        }
    }

    fn reverse_index(&mut self) {
        self.reset_wrap();
        if self.row == self.top {
            self.scroll_down(1);
        } else if self.row > 0 {
            self.row -= 1;
        }
    }

    fn scroll_up(&mut self, n: usize) {
        let (top, bot) = (self.top, self.bot);
        let n = n.min(bot - top + 1);
        let at = bot + 1 - n;
        // The primary screen is the one shown.
        let to_scrollback = top == 0 && !self.alt_shown;
        if to_scrollback && bot + 1 == self.screen.len() {
            // The whole primary screen, the usual case: its top rows go to scrollback and
            // blank ones come in at the bottom, the ring turning without moving the others.
            for _ in 0..n {
                let line = self.screen.pop_front().unwrap_or_default();
                self.push_scrollback(line);
                self.screen.push_back(Line {
                    cells: std::mem::take(&mut self.spare),
                    ..Line::default()
                });
            }
            return;
        }
        let g = self.grid();
        if top == 0 && bot + 1 == g.len() {
            // The whole alternate screen: a ring turns without moving its other rows.
            g.rotate_left(n);
        } else {
            g.make_contiguous()[top..=bot].rotate_left(n);
        }
        if to_scrollback {
            for k in at..=bot {
                let line = std::mem::take(&mut self.screen[k]);
                self.push_scrollback(line);
                self.screen[k].cells = std::mem::take(&mut self.spare);
            }
        } else {
            for line in g.range_mut(at..=bot) {
                *line = Line::default();
            }
        }
    }

    fn scroll_down(&mut self, n: usize) {
        let (top, bot) = (self.top, self.bot);
        let n = n.min(bot - top + 1);
        shift_down(&mut self.grid().make_contiguous()[top..=bot], n);
    }

    /// What a scrollback line counts against `max_bytes`: the cells the views show (a
    /// soft-wrapped row is padded to the width, whatever cells it holds) and a fixed part.
    fn line_cost(&self, line: &Line) -> usize {
        let padding = if line.wrapped { self.wrap_pad(line) } else { 0 };
        line.cells.len() + padding + LINE_COST
    }

    /// Keeps `line`, scrolled off the top of the primary screen, in scrollback, within its
    /// bounds.
    #[inline]
    fn push_scrollback(&mut self, mut line: Line) {
        // Capacity left over from a longer past must not escape the `max_bytes` bound: a kept
        // line holds at most twice its cells plus a first allocation's worth.
        if line.cells.capacity() > 2 * line.cells.len() + LINE_CAPACITY {
            line.cells.shrink_to_fit();
        }
        self.sb_cost += self.line_cost(&line);
        self.sb.push_back(line);
        self.trim_scrollback();
    }

    fn trim_scrollback(&mut self) {
        while !self.sb.is_empty() && (self.sb.len() > self.sb_max || self.sb_cost > self.max_bytes)
        {
            if let Some(old) = self.sb.pop_front() {
                self.sb_cost -= self.line_cost(&old);
                self.truncated = true;
                // Reused for the next blank line: a steady stream then allocates nothing.
                let mut cells = old.cells;
                cells.clear();
                self.spare = cells;
                // The next line to go is the next spare, and its memory is long cold: ask for
                // its cells now, and for the one after's header (read to find its cells).
                Self::prefetch_line(self.sb.front());
                if let Some(after) = self.sb.get(1) {
                    prefetch(std::ptr::from_ref(after));
                }
            }
        }
    }

    // -------------------------------------------------------------------- CSI

    fn csi(&mut self, f: u8) {
        let inter = &self.inter[..self.inter_len];
        if inter == b"?" {
            match f {
                b'h' | b'l' => self.private_modes(f == b'h'),
                b'J' => self.erase_display(self.params.arg(0, 0)),
                b'K' => self.erase_line(self.params.arg(0, 0)),
                _ => {}
            }
            return;
        }
        if inter == b"!" && f == b'p' {
            self.decstr();
            return;
        }
        if !inter.is_empty() {
            return;
        }
        let w = self.w;
        let rows = self.rows;
        let a0 = usize::from(self.params.arg(0, 1));
        match f {
            b'm' => self.sgr(),
            b'K' => self.erase_line(self.params.arg(0, 0)),
            b'J' => self.erase_display(self.params.arg(0, 0)),
            b'A' | b'F' | b'B' | b'e' | b'E' => self.move_rows(f, a0),
            b'C' | b'a' => self.col = (self.col + a0).min(w - 1),
            // From a pending wrap, back from the last column (xterm's CursorBack).
            b'D' => self.col = self.edit_col().saturating_sub(a0),
            b'G' | b'`' => self.set_col(self.params.arg(0, 1)),
            b'H' | b'f' => {
                self.row = self.addressed_row(a0);
                self.col = (usize::from(self.params.arg(1, 1)) - 1).min(w - 1);
            }
            b'd' => {
                self.row = self.addressed_row(a0);
                self.reset_wrap();
            }
            b'I' => {
                // Each step moves right, so a count past the stops left costs nothing more.
                for _ in 0..a0 {
                    if self.col >= w - 1 {
                        break;
                    }
                    self.col = self.next_tab(self.col);
                }
            }
            b'Z' => {
                // From a pending wrap, back from the last column (only stops left of it).
                self.reset_wrap();
                for _ in 0..a0 {
                    if self.col == 0 {
                        break;
                    }
                    self.col = self.previous_tab(self.col);
                }
            }
            b'g' => match self.params.arg(0, 0) {
                0 => {
                    let col = self.edit_col();
                    self.tab_stops()[col] = false;
                }
                3 => self.tabs = Some(vec![false; w]),
                _ => {}
            },
            b'@' => self.insert_chars(a0),
            b'P' => self.delete_chars(a0),
            b'X' => self.erase_chars(a0),
            b'L' | b'M' => self.insert_delete_lines(a0, f == b'L'),
            b'S' => self.scroll_up(a0),
            // As xterm: more than one parameter, or an explicit 0, is mouse tracking.
            b'T' if self.params.len() <= 1
                && !(self.first_digits && self.params.arg(0, 0) == 0) =>
            {
                self.scroll_down(a0);
            }
            b'b' => {
                if let Some(c) = self.repeatable.take() {
                    let mut b = [0u8; 4];
                    let s = c.encode_utf8(&mut b);
                    let rep = s.repeat(a0);
                    self.print_str(&rep);
                    // A REP does not make its character repeatable again.
                    self.last = None;
                }
            }
            b'r' => {
                let top = usize::from(self.params.arg(0, 1));
                let bot = usize::from(self.params.arg(1, u16::try_from(rows).unwrap_or(u16::MAX)))
                    .min(rows);
                if top < bot {
                    self.top = top - 1;
                    self.bot = bot - 1;
                    self.home();
                }
            }
            b's' if self.params.is_bare() => self.save_cursor(),
            b'u' if self.params.is_bare() => self.restore_cursor(),
            _ => {}
        }
    }

    /// CUU and CPL (`A`, `F`) up, CUD, VPR and CNL (`B`, `e`, `E`) down, `n` rows but not past
    /// the margin the cursor is within; CPL and CNL go to column 0, the others end a pending
    /// wrap.
    fn move_rows(&mut self, f: u8, n: usize) {
        if matches!(f, b'A' | b'F') {
            let floor = if self.row >= self.top { self.top } else { 0 };
            self.row = self.row.saturating_sub(n).max(floor);
        } else {
            let ceil = if self.row <= self.bot {
                self.bot
            } else {
                self.rows - 1
            };
            self.row = (self.row + n).min(ceil);
        }
        if matches!(f, b'E' | b'F') {
            self.col = 0;
        } else {
            self.reset_wrap();
        }
    }

    /// IL (`insert`) or DL at the cursor row, within the scroll region.
    fn insert_delete_lines(&mut self, n: usize, insert: bool) {
        let (top, bot, row) = (self.top, self.bot, self.row);
        if top <= row && row <= bot {
            let n = n.min(bot - row + 1);
            let region = &mut self.grid().make_contiguous()[row..=bot];
            if insert {
                shift_down(region, n);
            } else {
                shift_up(region, n);
            }
            self.col = 0;
        }
    }

    fn private_modes(&mut self, on: bool) {
        for i in 0..self.params.len() {
            let mode = self.params.group(i)[0];
            match mode {
                6 => {
                    self.origin = on;
                    self.home();
                }
                7 => self.autowrap = on,
                1048 => {
                    if on {
                        self.save_cursor();
                    } else {
                        self.restore_cursor();
                    }
                }
                // As xterm's charproc.c: only the switch itself depends on the screen shown;
                // ?1049 saves, clears and restores whichever it is on.
                47 | 1047 if on => self.show_alternate(),
                47 => self.show_primary(),
                1047 => {
                    if self.alt_shown {
                        self.erase_display(2);
                    }
                    self.show_primary();
                }
                1049 if on => {
                    self.save_cursor();
                    self.show_alternate();
                    self.erase_display(2);
                }
                1049 => {
                    self.show_primary();
                    self.restore_cursor();
                }
                _ => {}
            }
        }
    }

    /// Shows the alternate screen as it was last left (blank the first time).
    fn show_alternate(&mut self) {
        if !self.alt_shown {
            self.alt_shown = true;
            std::mem::swap(&mut self.screen, &mut self.other);
            if self.screen.is_empty() {
                self.screen = std::iter::repeat_with(Line::default)
                    .take(self.rows)
                    .collect();
            }
        }
    }

    /// Shows the primary screen, keeping the alternate one as it is.
    fn show_primary(&mut self) {
        if self.alt_shown {
            self.alt_shown = false;
            std::mem::swap(&mut self.screen, &mut self.other);
        }
    }

    /// The cursor to the first column of the first row it may address (the top margin in
    /// origin mode).
    fn home(&mut self) {
        self.row = if self.origin { self.top } else { 0 };
        self.col = 0;
    }

    /// The screen row of row `n` (1-based) as CUP and VPA address it: from the top margin and
    /// no further than the bottom one in origin mode, else from the top of the screen.
    fn addressed_row(&self, n: usize) -> usize {
        if self.origin {
            (self.top + n - 1).min(self.bot)
        } else {
            (n - 1).min(self.rows - 1)
        }
    }

    /// The tab stops, made explicit (every 8 columns) the first time they are changed.
    fn tab_stops(&mut self) -> &mut Vec<bool> {
        let w = self.w;
        self.tabs
            .get_or_insert_with(|| (0..w).map(|c| c > 0 && c % 8 == 0).collect())
    }

    /// The first tab stop right of `col`, or the last column.
    fn next_tab(&self, col: usize) -> usize {
        let last = self.w - 1;
        let col = col.min(last);
        match &self.tabs {
            None => ((col / 8 + 1) * 8).min(last),
            // A scan of at most one row's flags: the cost of a tab is bounded by the width.
            Some(stops) => stops[col + 1..]
                .iter()
                .position(|&stop| stop)
                .map_or(last, |p| col + 1 + p),
        }
    }

    /// The last tab stop left of `col` (above 0), or column 0.
    fn previous_tab(&self, col: usize) -> usize {
        match &self.tabs {
            None => (col.min(self.w) - 1) / 8 * 8,
            Some(stops) => stops[..col.min(self.w)]
                .iter()
                .rposition(|&stop| stop)
                .unwrap_or(0),
        }
    }

    /// CHA/HPA: to column `n` (1-based; 0 means 1), within the row.
    fn set_col(&mut self, n: u16) {
        self.col = (usize::from(n.max(1)) - 1).min(self.w - 1);
    }

    fn edit_col(&self) -> usize {
        self.col.min(self.w - 1)
    }

    /// EL: from the cursor (0), to it (1) or the whole row (2). A row erased to its end is no
    /// longer soft-wrapped (xterm's `ClearRight`), nor is one erased whole.
    fn erase_line(&mut self, mode: u16) {
        if mode > 2 {
            return;
        }
        let x = self.edit_col();
        self.col = x;
        let (row, w) = (self.row, self.w);
        let line = &mut self.grid()[row];
        match mode {
            0 => {
                split(&mut line.cells, x);
                line.cells.truncate(x);
                line.wrapped = false;
            }
            1 if x + 1 < w => {
                split(&mut line.cells, x + 1);
                let end = (x + 1).min(line.cells.len());
                line.cells[..end].fill(BLANK);
            }
            _ => line.clear(),
        }
    }

    fn erase_display(&mut self, mode: u16) {
        let (row, rows) = (self.row, self.rows);
        match mode {
            0 => {
                self.erase_line(0);
                for line in self.grid().range_mut(row + 1..rows) {
                    line.clear();
                }
            }
            1 => {
                for line in self.grid().range_mut(..row) {
                    line.clear();
                }
                self.erase_line(1);
            }
            2 => {
                self.reset_wrap();
                for line in self.grid().iter_mut() {
                    line.clear();
                }
            }
            3 => {
                self.sb.clear();
                self.sb_cost = 0;
            }
            _ => {}
        }
    }

    fn insert_chars(&mut self, n: usize) {
        let w = self.w;
        let x = self.edit_col();
        self.col = x;
        let n = n.min(w - x);
        let row = self.row;
        let cells = &mut self.grid()[row].cells;
        if x >= cells.len() {
            return;
        }
        split(cells, x);
        split(cells, w - n);
        cells.splice(x..x, std::iter::repeat_n(BLANK, n));
        cells.truncate(w);
        // Blanks at the end of a row show as nothing (every view trims them), but stored they
        // count against `max_bytes`: pushing a short transcript row's text out past the
        // 8,192-column limit would otherwise keep 8,192 blank cells.
        let kept = cells.iter().rposition(|&c| c != BLANK).map_or(0, |p| p + 1);
        cells.truncate(kept);
    }

    /// DCH; as in xterm, the row is no longer soft-wrapped.
    fn delete_chars(&mut self, n: usize) {
        let x = self.edit_col();
        self.col = x;
        let n = n.min(self.w - x);
        let row = self.row;
        let line = &mut self.grid()[row];
        line.wrapped = false;
        let cells = &mut line.cells;
        if x >= cells.len() {
            return;
        }
        split(cells, x);
        split(cells, x + n);
        let end = (x + n).min(cells.len());
        cells.drain(x..end);
    }

    /// ECH; as in xterm (`ClearRight`), the row is no longer soft-wrapped.
    fn erase_chars(&mut self, n: usize) {
        let x = self.edit_col();
        self.col = x;
        let end = (x + n).min(self.w);
        let row = self.row;
        let line = &mut self.grid()[row];
        line.wrapped = false;
        let cells = &mut line.cells;
        if x >= cells.len() {
            return;
        }
        split(cells, x);
        split(cells, end);
        let end = end.min(cells.len());
        cells[x..end].fill(BLANK);
    }

    fn sgr(&mut self) {
        let new = sgr(self.pen, &self.params);
        if new != self.pen {
            self.pen = new;
            self.pen_id = None;
        }
    }
}

/// Parameters of a CSI, each with its sub-parameters.
trait ParamGroups {
    fn len(&self) -> usize;
    fn group(&self, i: usize) -> &[u16];
}

impl ParamGroups for Params {
    fn len(&self) -> usize {
        Params::len(self)
    }
    fn group(&self, i: usize) -> &[u16] {
        Params::group(self, i)
    }
}

/// Parameters without sub-parameters.
struct Plain<'a>(&'a [u16]);

impl ParamGroups for Plain<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    fn group(&self, i: usize) -> &[u16] {
        std::slice::from_ref(&self.0[i])
    }
}

/// The colour of an extended-colour SGR (38, 48 or 58) whose own parameter group is `group`;
/// `i` is the index of the group after it, moved past the groups the colour takes.
fn extended_color<P: ParamGroups>(group: &[u16], p: &P, i: &mut usize) -> Option<u32> {
    let count = p.len();
    let mut color: Option<u32> = None;
    let rgb = |red: u16, green: u16, blue: u16| {
        (red <= 255 && green <= 255 && blue <= 255)
            .then(|| RGB_BIT | u32::from(red) << 16 | u32::from(green) << 8 | u32::from(blue))
    };
    if group.len() > 1 {
        // Colon form: 38:5:n, 38:2:r:g:b or 38:2:colourspace:r:g:b.
        if group[1] == 5 && group.len() >= 3 && group[2] <= 255 {
            color = Some(u32::from(group[2]) + 1);
        } else if group[1] == 2 && group.len() >= 5 {
            let c = if group.len() == 5 {
                &group[2..5]
            } else {
                &group[3..6]
            };
            color = rgb(c[0], c[1], c[2]);
        }
    } else if *i < count && p.group(*i).len() > 1 {
        // xterm's mixed form: 38;5:n, 38;2:r:g:b or 38;2:colourspace:r:g:b.
        let g = p.group(*i);
        let at = if g.len() > 4 { 2 } else { 1 };
        if g[0] == 5 && g.len() > at && g[at] <= 255 {
            color = Some(u32::from(g[at]) + 1);
        } else if g[0] == 2 && g.len() >= at + 3 {
            color = rgb(g[at], g[at + 1], g[at + 2]);
        }
        *i += 1;
    } else if *i < count {
        let mode = p.group(*i)[0];
        if mode == 5 {
            if *i + 1 < count {
                let idx = p.group(*i + 1)[0];
                if idx <= 255 {
                    color = Some(u32::from(idx) + 1);
                }
                *i += 2;
            } else {
                *i = count;
            }
        } else if mode == 2 {
            if *i + 3 < count {
                color = rgb(p.group(*i + 1)[0], p.group(*i + 2)[0], p.group(*i + 3)[0]);
                *i += 4;
            } else {
                *i = count;
            }
        } else {
            *i += 1;
        }
    }
    color
}

/// The pen after SGR code `code` written alone (no sub-parameters), as the one parameter of
/// an SGR or one of several: every code but the extended colours (38, 48, 58), which take the
/// parameters after them (alone they change nothing).
#[allow(
    clippy::inline_always,
    reason = "outlined, it costs a call per SGR, most of the escapes in coloured output"
)]
#[inline(always)]
fn sgr1(pen: StyleKey, code: u16) -> StyleKey {
    let mut k = pen;
    match code {
        0 => {
            k.fg = 0;
            k.bg = 0;
            k.flags = 0;
        }
        1 => k.flags |= BOLD,
        2 => k.flags |= DIM,
        3 => k.flags |= ITALIC,
        4 | 21 => k.flags |= UNDERLINE,
        7 => k.flags |= INVERSE,
        9 => k.flags |= STRIKE,
        22 => k.flags &= !(BOLD | DIM),
        23 => k.flags &= !ITALIC,
        24 => k.flags &= !UNDERLINE,
        27 => k.flags &= !INVERSE,
        29 => k.flags &= !STRIKE,
        30..=37 => k.fg = u32::from(code - 30) + 1,
        39 => k.fg = 0,
        40..=47 => k.bg = u32::from(code - 40) + 1,
        49 => k.bg = 0,
        90..=97 => k.fg = u32::from(code - 90) + 9,
        100..=107 => k.bg = u32::from(code - 100) + 9,
        _ => {}
    }
    k
}

/// The pen after an SGR with parameters `p`.
#[inline]
fn sgr<P: ParamGroups>(pen: StyleKey, p: &P) -> StyleKey {
    let count = p.len();
    let mut k = pen;
    let mut i = 0;
    while i < count {
        let group = p.group(i);
        let code = group[0];
        i += 1;
        match code {
            // `4:0` is "not underlined" (other underline styles are underlines).
            4 if group.len() > 1 && group[1] == 0 => k.flags &= !UNDERLINE,
            38 | 48 | 58 => {
                let color = extended_color(group, p, &mut i);
                if let Some(c) = color {
                    if code == 38 {
                        k.fg = c;
                    } else if code == 48 {
                        k.bg = c;
                    }
                }
            }
            _ => k = sgr1(k, code),
        }
    }
    k
}

/// The [`Terminal::text`] view of a whole buffer fed to a default terminal. The buffer is
/// all there is: an incomplete UTF-8 sequence at its end becomes U+FFFD, as in
/// `data.decode("utf-8", "replace")`, where a stream would wait for the rest.
pub fn render_text(data: &[u8]) -> String {
    let mut t = Terminal::new(TerminalConfig::default());
    t.feed(data);
    if t.utf8_len > 0 {
        t.end_utf8();
    }
    t.text()
}

#[cfg(test)]
mod tests;
