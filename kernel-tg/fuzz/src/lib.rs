//! The renderer's sources from kernel-tg, compiled alone for fuzzing as `kernel_tg::render`.
#![forbid(unsafe_code)]

#[path = "../../src"]
mod sources {
    pub mod render;
}

pub use sources::render;
