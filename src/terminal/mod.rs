//! Display-only terminal renderer for ACP `terminal_output_chunk` streams.
//!
//! [`Terminal`] takes raw PTY bytes ([`Terminal::feed`]) through an incremental UTF-8 decoder
//! and a DEC/ECMA-48 escape parser ([`parser`]) into a grid of cells with interned styles, read
//! as [`Terminal::text`], [`Terminal::lines`], [`Terminal::spans`], [`Terminal::screen`] and
//! [`Terminal::cursor`]. The behaviour (model, bounds, what is not implemented) is specified in
//! `docs/behaviour/terminal.md`; the pure-Python twin is `python/acpwire/_pure/terminal/`.
//!
//! This module holds the state, its configuration, feeding and resetting, and the accessors;
//! each child module holds one part of the behaviour as `impl Terminal` blocks over that state.

pub(crate) mod cell;
mod csi;
mod execute;
mod line;
mod osc;
mod params;
pub mod parser;
mod print;
mod screen;
mod scrollback;
mod sgr;
mod style;
mod utf8;
mod views;
mod width;

use std::collections::VecDeque;
use std::sync::Arc;

// Keyed hashing: the tables are filled from the stream (URIs, clusters), so it must resist
// flooding, and SipHash costs more than the rest of an interning.
use foldhash::HashMap;

use cell::Cell;
use line::{LINE_CAPACITY, LINE_COST, Line, release_slack};
use params::Params;
use parser::State;
use screen::Saved;
use sgr::{PenEdit, SGR_MEMO, SGR_STEPS};
use style::{INTERNED_COST, STYLE_CACHE, StyleKey, id32};
use width::WIDTH_CACHE;

pub use crate::base64::{TerminalDataError, decode_base64, decode_base64_into};
pub use osc::{MAX_OSC_BYTES, Progress};
pub use style::{Color, Style};
pub use views::spans::{Span, StyledLine};
pub use width::width;

/// Row width used when `cols` is `None`.
pub const UNBOUNDED_COLS: usize = 8192;

/// Widest and tallest grid. Escape sequences address at most column and row 65535, so a larger
/// grid holds nothing more; the screen is allocated row by row up front, so its height must
/// stay in reason.
pub const MAX_COLS: usize = 65_535;

pub const MAX_ROWS: usize = 65_535;

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
    /// Tab stops set by HTS/TBC; `None` until then: every 8 columns.
    tabs: Option<screen::TabStops>,
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
            style_ids: HashMap::default(),
            style_cache: None,
            sgr_memo: None,
            sgr_steps: None,
            width_cache: None,
            links: Vec::new(),
            link_ids: HashMap::default(),
            clusters: Vec::new(),
            cluster_ids: HashMap::default(),
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
        self.link_ids = HashMap::default();
        self.link_bytes = 0;
        self.clusters = Vec::new();
        self.cluster_ids = HashMap::default();
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
        self.cluster_ids = HashMap::default();
        self.cluster_bytes = 0;
        // The links the pen and the saved cursors still carry are kept, renumbered in that
        // order; the rest go.
        let old = std::mem::replace(&mut self.links, vec![Arc::from("")]);
        self.link_ids = HashMap::default();
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
