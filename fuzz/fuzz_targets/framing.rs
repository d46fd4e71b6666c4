//! The framer gives the same frames and errors however the stream is cut, keeps no more than
//! the cap buffered, and hands out exactly the bytes of each line.
#![no_main]

use acpwire::framing::{Event, FrameError, Framer};
use libfuzzer_sys::fuzz_target;

mod split;

#[derive(Debug, PartialEq)]
enum Seen {
    Frame {
        bytes: Vec<u8>,
        line: u64,
        offset: u64,
    },
    Error(FrameError),
}

fn run(cap: usize, pieces: &[&[u8]]) -> (Vec<Seen>, u64, u64) {
    let mut framer = Framer::new(cap);
    let mut seen = Vec::new();
    let mut record = |event: Event<'_>| {
        seen.push(match event {
            Event::Frame(f) => Seen::Frame {
                bytes: f.bytes.to_vec(),
                line: f.line,
                offset: f.offset,
            },
            Event::Error(e) => Seen::Error(e),
        });
    };
    for piece in pieces {
        framer.feed(piece, &mut record);
        assert!(
            framer.buffered() <= cap + 1,
            "buffered {} over cap {cap}",
            framer.buffered()
        );
    }
    framer.finish(&mut record);
    (seen, framer.frames(), framer.position())
}

fuzz_target!(|input: &[u8]| {
    let ([cap_byte, cut_count], rest) = split::header::<2>(input);
    let cuts = usize::from(cut_count % 8).min(rest.len());
    let (sizes, data) = rest.split_at(cuts);
    let cap = 1 + usize::from(cap_byte);
    let whole = run(cap, &[data]);
    let cut = run(cap, &split::pieces(data, sizes));
    assert_eq!(whole, cut);
    for seen in &whole.0 {
        if let Seen::Frame { bytes, offset, .. } = seen {
            let at = usize::try_from(*offset).unwrap();
            assert!(bytes.len() <= cap);
            assert_eq!(&data[at..at + bytes.len()], &bytes[..]);
            assert!(!bytes.contains(&b'\n'));
        }
    }
});
