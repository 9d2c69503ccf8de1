//! kernel-tg as a library.
#![forbid(unsafe_code)]
