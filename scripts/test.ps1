# The PowerShell twin of scripts/test, for Windows: builds both binaries, then runs the tests of
# the crates whose tests run on Windows (kernel-common, kernel-tg). kernel-agentd's tests and the
# end-to-end suites of the `tests` crate need Unix (sh fakes, signals, the Unix socket) and run on
# Linux, where CI also runs the Windows builds under Wine (tests/windows/ci).
$ErrorActionPreference = 'Stop'
Set-Location (Join-Path $PSScriptRoot '..')

Write-Output '==> building binaries'
cargo build -p kernel-agentd --bin kernel-agentd -p kernel-tg --bin kernel-tg
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
Write-Output '==> running tests'
cargo test --no-fail-fast -p kernel-common -p kernel-tg @args
exit $LASTEXITCODE
