//! Benchmark: rendering and splitting a 100 KB model reply (prose, lists, code, a CJK table,
//! links) into Telegram chunks. Run with `cargo bench -p kernel-tg --bench render`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kernel_render::render;

/// One section of a realistic reply; repeated to the wanted size.
fn section(n: usize) -> String {
    format!(
        "## Step {n}: configure the service\n\n\
         First, **stop** the running unit and check its *status* with `systemctl status kernel`. \
         See [the docs](https://example.com/docs?section={n}&lang=en) for details; \
         errors like `x < y && y > z` are harmless.\n\n\
         - edit `/etc/kernel/config.toml`\n\
         - set `allowed_user` to your id\n  - nested: keep the token secret\n\
         - [x] restart\n\n\
         ```rust\nfn step_{n}() -> Result<(), Error> {{\n    let x = vec![1, 2, 3];\n    \
         if x.len() < 4 && x[0] > 0 {{ println!(\"<ok> & done\"); }}\n    Ok(())\n}}\n```\n\n\
         | 名称 | 值 | note |\n|---|---:|:-:|\n| 超时 | 30 | 秒 |\n| retries | 5 | 🚀 |\n\n\
         > 注意：修改配置后需要重启服务。这一段是没有空格的中文文本，用来测试按字符切分。\n\n"
    )
}

fn reply(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 1024);
    let mut n = 0;
    while out.len() < bytes {
        out.push_str(&section(n));
        n += 1;
    }
    out
}

fn bench_render(c: &mut Criterion) {
    let markdown = reply(100 * 1024);
    let mut group = c.benchmark_group("render");
    group.throughput(Throughput::Bytes(markdown.len() as u64));
    group.bench_function("100KB reply", |b| b.iter(|| render(black_box(&markdown))));
    group.finish();
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
