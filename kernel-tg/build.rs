//! Links the binary (kernel-tg's, and kernel-web's, whose `Cargo.toml` names this file) with packed relative relocations (`DT_RELR`) on Linux/glibc: a
//! position-independent Rust binary has tens of thousands of relative relocations, which as
//! classic `.rela.dyn` entries (24 bytes each) take over a megabyte of the file that the dynamic
//! loader reads, and keeps resident, at every start; packed they take a few kilobytes
//! (BENCHMARKS.md "Footprint"). glibc 2.36 and binutils 2.38 or newer support it; an older `ld`
//! only warns and links the classic form.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu")
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
