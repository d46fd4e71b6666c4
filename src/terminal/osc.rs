//! OSC sequences: the title (0, 2), hyperlinks (8) and progress (9;4).

use std::sync::Arc;

use super::Terminal;
use super::style::{MAX_LINK_BYTES, MAX_LINKS, id32};

/// Largest OSC payload kept; a longer OSC is dropped whole.
pub const MAX_OSC_BYTES: usize = 64 * 1024;

/// The OSC buffer's capacity kept between sequences: room for a typical OSC 8 link.
pub(super) const OSC_KEPT_CAPACITY: usize = 1024;

/// Progress reported with OSC 9;4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// 1 normal, 2 error, 3 indeterminate, 4 paused (0 clears and is never stored).
    pub state: u8,
    /// 0-100, or `None` when not given (always `None` for state 3).
    pub percent: Option<u8>,
}

/// `s` cut at its first `;`, as `str::split_once(';')` does with text, found byte by byte: an
/// OSC's fields are a few bytes long, shorter than what the general pattern search costs to
/// start.
#[inline]
pub(super) fn split_field(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let p = s.iter().position(|&b| b == b';')?;
    Some((&s[..p], &s[p + 1..]))
}

/// The `;`-separated fields of `s`, as `split(|&b| b == b';')` yields them (see
/// [`split_field`]).
pub(super) fn split_fields(s: &[u8]) -> impl Iterator<Item = &[u8]> {
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
pub(super) fn decode_lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// An ASCII decimal saturating at 65535; `None` if empty or not all digits.
pub(super) fn parse_uint(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s.iter()
            .fold(0u32, |acc, &b| (acc * 10 + u32::from(b - b'0')).min(65535)),
    )
}

impl Terminal {
    pub(super) fn osc_end(&mut self) {
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

    /// An OSC's payload, read as bytes: its fields are split at `;` bytes, which no invalid
    /// UTF-8 sequence takes in, so each text field decodes by itself as it would in the whole
    /// decoded payload, and the numeric ones (progress) need no decoding.
    pub(super) fn osc_dispatch(&mut self, payload: &[u8]) {
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
}
