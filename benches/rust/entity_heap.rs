//! What a store holds on the heap per session, tool call and message: the bytes of every live
//! allocation (as the allocator sized it) once `--count` of each are reduced, divided by the
//! count. Unlike resident memory, the figure is not rounded to the allocator's segments nor
//! raised by freed memory the allocator keeps, so it shows a change of a few bytes per entity.
//!
//! ```text
//! cargo bench --bench entity_heap [-- --count 200000]
//! cargo bench --bench entity_heap -- --trace FILE.ndjson
//! ```
//!
//! `--trace` prints instead what a store with the default bounds holds once it has reduced
//! the file.
//!
//! The entities are those of `benches/scripts/entity_costs.py` (which measures resident
//! memory through the Python package), with the changes taken as a live client takes them.
//! Built with the `python` feature (whose extension sets the allocator) it only says so.
#![cfg_attr(feature = "python", allow(dead_code, unused_imports))]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicIsize, Ordering};

use acpwire::session::{Sessions, SessionsConfig};
use mimalloc::MiMalloc;

/// The extension's allocator, counting the usable size of what is live.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

fn usable(ptr: *mut u8) -> isize {
    // SAFETY: `ptr` came from MiMalloc (every allocation of this process goes through it).
    isize::try_from(unsafe { MiMalloc.usable_size(ptr) }).unwrap_or(isize::MAX)
}

// SAFETY: every call forwards to MiMalloc with the same arguments; the counter is a side note.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as given.
        let ptr = unsafe { MiMalloc.alloc(layout) };
        if !ptr.is_null() {
            LIVE.fetch_add(usable(ptr), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(usable(ptr), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = usable(ptr);
        // SAFETY: forwarded as given.
        let moved = unsafe { MiMalloc.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_add(usable(moved) - before, Ordering::Relaxed);
        }
        moved
    }
}

#[cfg(not(feature = "python"))]
#[global_allocator]
static ALLOCATOR: Counting = Counting;

const KINDS: [&str; 4] = ["empty_sessions", "sessions", "tool_calls", "messages"];

fn frame(kind: &str, i: usize) -> String {
    let (sid, update) = match kind {
        "empty_sessions" => (
            format!("sess_{i:07}"),
            r#"{"sessionUpdate":"session_info_update"}"#.to_owned(),
        ),
        "sessions" => (
            format!("sess_{i:07}"),
            r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"}}"#
                .to_owned(),
        ),
        "tool_calls" => (
            "s".to_owned(),
            format!(
                r#"{{"sessionUpdate":"tool_call","toolCallId":"call_{i:07}","title":"Read file","kind":"read","status":"completed"}}"#
            ),
        ),
        _ => (
            "s".to_owned(),
            format!(
                r#"{{"sessionUpdate":"agent_message_chunk","messageId":"m{i:07}","content":{{"type":"text","text":"hello"}}}}"#
            ),
        ),
    };
    format!(
        r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{sid}","update":{update}}}}}"#
    ) + "\n"
}

/// Live heap bytes per entity once `count` entities of `kind` are reduced.
fn held_per_entity(kind: &str, count: usize) -> isize {
    let mut store = Sessions::new(SessionsConfig {
        max_bytes: None,
        ..SessionsConfig::default()
    });
    let base = LIVE.load(Ordering::Relaxed);
    let mut buffer = String::new();
    let mut held = 0;
    for i in 0..=count {
        if i == count || buffer.len() > 1 << 20 {
            store.feed(buffer.as_bytes());
            buffer.clear();
            drop(store.take_changes());
            // What the store holds, not the input buffer's capacity.
            held = LIVE.load(Ordering::Relaxed)
                - base
                - isize::try_from(buffer.capacity()).unwrap_or(0);
        }
        if i < count {
            buffer.push_str(&frame(kind, i));
        }
    }
    let count = isize::try_from(count).unwrap_or(isize::MAX);
    let per_entity = (held + count / 2) / count;
    drop(store);
    per_entity
}

#[cfg(feature = "python")]
fn main() {
    eprintln!("entity_heap sets the allocator itself: run it without the `python` feature");
}

/// Live heap bytes once the trace at `path` is reduced in 64 KiB pieces, and its size.
fn held_for_trace(path: &str) -> (isize, usize) {
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut store = Sessions::new(SessionsConfig::default());
    let base = LIVE.load(Ordering::Relaxed);
    for piece in data.chunks(64 << 10) {
        store.feed(piece);
    }
    store.finish();
    let held = LIVE.load(Ordering::Relaxed) - base;
    drop(store);
    (held, data.len())
}

#[cfg(not(feature = "python"))]
fn main() {
    let mut args = std::env::args().skip(1);
    let mut count = 200_000;
    while let Some(arg) = args.next() {
        if arg == "--count"
            && let Some(n) = args.next().and_then(|n| n.parse::<usize>().ok())
        {
            count = n.max(1);
        }
        if arg == "--trace"
            && let Some(path) = args.next()
        {
            let (held, size) = held_for_trace(&path);
            println!("{path}: {held} heap bytes held for {size} bytes fed (default bounds)");
            return;
        }
    }
    println!("heap bytes held per entity ({count} each, changes taken)");
    for kind in KINDS {
        println!("{kind:15} {:6}", held_per_entity(kind, count));
    }
}
