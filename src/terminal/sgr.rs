//! SGR: the pen after a Select Graphic Rendition, with the memos that find the result of a
//! repeated SGR without parsing it again.

use super::Terminal;
use super::params::{ParamGroups, Plain, plain_params};
use super::style::{BOLD, DIM, INVERSE, ITALIC, MAX_STYLES, RGB_BIT, STRIKE, StyleKey, UNDERLINE};
use crate::simd::terminal_input::param_bytes;

/// What an SGR does to a pen, whatever the pen: each bit of its colours and attributes is
/// kept, cleared or set (each code sets a field or sets or clears flags; none reads the pen).
/// The link is never touched.
#[derive(Clone, Copy, Default)]
pub(super) struct PenEdit {
    pub(super) keep: [u32; 3],
    pub(super) set: [u32; 3],
}

impl PenEdit {
    /// The edit of an SGR of parameters `vals`: what it makes of a pen of all zeros gives
    /// the bits it sets, and of one of all ones those it keeps (or sets).
    pub(super) fn of(vals: &[u16]) -> PenEdit {
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
    pub(super) fn apply(self, pen: StyleKey) -> StyleKey {
        StyleKey {
            fg: pen.fg & self.keep[0] | self.set[0],
            bg: pen.bg & self.keep[1] | self.set[1],
            flags: pen.flags & self.keep[2] | self.set[2],
            link: pen.link,
        }
    }
}

pub(super) const SGR_MEMO: usize = 16;

pub(super) const SGR_STEPS: usize = 64;

/// The colour of an extended-colour SGR (38, 48 or 58) whose own parameter group is `group`;
/// `i` is the index of the group after it, moved past the groups the colour takes.
pub(super) fn extended_color<P: ParamGroups>(group: &[u16], p: &P, i: &mut usize) -> Option<u32> {
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
pub(super) fn sgr1(pen: StyleKey, code: u16) -> StyleKey {
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
pub(super) fn sgr<P: ParamGroups>(pen: StyleKey, p: &P) -> StyleKey {
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

impl Terminal {
    /// An SGR at `data[i..]` (after `ESC [`) of up to 15 bytes of `;`-separated decimal
    /// parameters, applied as the edit it was last seen to make: an SGR of several parameters
    /// (colours, bold and a colour) is parsed once, and then found by its bytes whatever the
    /// pen. `None`, having changed nothing, for anything else, and near the end of the data.
    #[inline]
    pub(super) fn memo_sgr(&mut self, data: &[u8], i: usize) -> Option<usize> {
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
    pub(super) fn sgr_code(&mut self, code: u16) {
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
    pub(super) fn set_pen(&mut self, new: StyleKey) {
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
    pub(super) fn reset_pen(&self) -> StyleKey {
        StyleKey {
            link: self.pen.link,
            ..StyleKey::default()
        }
    }

    pub(super) fn sgr(&mut self) {
        let new = sgr(self.pen, &self.params);
        if new != self.pen {
            self.pen = new;
            self.pen_id = None;
        }
    }
}
