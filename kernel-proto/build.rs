//! Compiles `proto/kernel/v1/agent.proto` with protox (no system `protoc` needed).

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time, not baked in with `env!`: a build script compiled for one checkout may be
    // reused by another at a different path (a shared target directory).
    let root = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../proto");
    let file = root.join("kernel/v1/agent.proto");
    println!("cargo:rerun-if-changed={}", file.display());
    let fds = protox::compile([&file], [&root])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("kernel_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
