//! The C heap of a long-running daemon. glibc's malloc gives every thread that allocates its
//! own arena (up to 8 per CPU) and keeps freed pages for reuse, so a daemon whose threads come
//! and go (tokio's blocking pool, one SQLite worker per connection) spreads a small live heap over
//! many arenas and holds on to the peak of each. [`tune`] caps the arenas; [`trim`] hands free
//! pages back to the OS — call it when a burst of work is over, off any latency-critical path.
//! Elsewhere than glibc both do nothing (musl, Windows and macOS allocators return memory on
//! their own).
#![allow(unsafe_code)]

/// Arenas glibc may create: one for the main thread's heap and one shared by all others.
pub const MAX_ARENAS: i32 = 2;

/// Caps glibc's malloc arenas at [`MAX_ARENAS`]. Call it first in `main`, before any thread is
/// spawned.
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a malloc parameter; it is called before any other thread exists,
    // and an unsupported value is ignored by glibc (returns 0), never undefined behaviour.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS);
    }
}

/// Returns the free pages of every arena to the OS. Takes well under a millisecond for a heap of
/// a few MB; call it from a blocking-safe place (it takes each arena's lock in turn).
pub fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim is thread-safe (it locks each arena) and only releases free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_after_a_freed_burst_keeps_the_heap_usable() {
        tune();
        let burst: Vec<Vec<u8>> = (0..256).map(|i| vec![i as u8; 16 * 1024]).collect();
        let sum: usize = burst.iter().map(|v| v[0] as usize).sum();
        drop(burst);
        trim();
        let after = vec![7u8; 64 * 1024];
        assert_eq!(sum, (0..256).sum::<usize>());
        assert_eq!(
            after.iter().map(|&b| b as usize).sum::<usize>(),
            7 * 64 * 1024
        );
    }
}
