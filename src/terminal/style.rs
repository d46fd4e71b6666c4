//! Styles (pens), the public [`Style`] and [`Color`], and the bounded interning of styles,
//! OSC 8 links and grapheme clusters that cells refer to by id.

use std::sync::Arc;

use super::Terminal;
use super::cell::{BLANK, CLUSTER_BIT, CONT};

pub(super) const MAX_STYLES: usize = 65536;

pub(super) const MAX_LINKS: usize = 4096;

pub(super) const MAX_LINK_BYTES: usize = 2083;

pub(super) const MAX_CLUSTERS: usize = 65536;

pub(super) const MAX_CLUSTER_CHARS: usize = 16;

pub(super) const BOLD: u32 = 1;

pub(super) const DIM: u32 = 2;

pub(super) const ITALIC: u32 = 4;

pub(super) const UNDERLINE: u32 = 8;

pub(super) const INVERSE: u32 = 16;

pub(super) const STRIKE: u32 = 32;

/// Colours are encoded as 0 = default, 1..=256 = palette index + 1, `RGB_BIT | 0xRRGGBB`.
pub(super) const RGB_BIT: u32 = 1 << 24;

/// What an interned style or grapheme cluster counts in [`Terminal::retained_bytes`] (a
/// cluster, its UTF-8 bytes besides).
pub(super) const INTERNED_COST: usize = 8;

/// A colour of a span.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    /// Palette index 0-255 (0-7 normal, 8-15 bright, then the 256-colour cube and greys).
    Indexed(u8),
    /// 24-bit colour.
    Rgb(u8, u8, u8),
}

pub(super) fn color_out(c: u32) -> Option<Color> {
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

/// A pen. Pens are compared and hashed often (every SGR, every style lookup), so both work on
/// the packed words rather than field by field.
#[derive(Clone, Copy, Default)]
pub(super) struct StyleKey {
    pub(super) fg: u32,
    pub(super) bg: u32,
    pub(super) flags: u32,
    pub(super) link: u32,
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

pub(super) const STYLE_CACHE: usize = 64;

impl StyleKey {
    #[inline]
    pub(super) fn packed(self) -> u128 {
        u128::from(self.fg)
            | u128::from(self.bg) << 32
            | u128::from(self.flags) << 64
            | u128::from(self.link) << 96
    }

    #[inline]
    pub(super) fn cache_slot(&self) -> usize {
        let words = u64::from(self.fg) | u64::from(self.bg) << 32;
        let h = (words ^ u64::from(self.flags) << 24 ^ u64::from(self.link) << 56)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The top bits mix every input bit.
        usize::try_from(h >> (64 - STYLE_CACHE.trailing_zeros())).unwrap_or(0)
    }
}

/// An index into an interned table; the tables are capped far below `u32::MAX`.
#[inline]
pub(super) fn id32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Terminal {
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

    #[inline]
    pub(super) fn style_id(&mut self) -> u32 {
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
    pub(super) fn intern_pen(&mut self, slot: usize) -> u32 {
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

    pub(super) fn combine(&mut self, ch: char) {
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
}
