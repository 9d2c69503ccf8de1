# Runs the web console (kernel-web) on Windows from .\config.toml (or $env:KERNEL_CONFIG), beside
# a Kernel already started by scripts\run.ps1 in another window: builds kernel-web (release),
# checks the config for it (a [web] section; a non-loopback listen needs tls_cert/tls_key),
# prints a one-time login link (valid 10 minutes, works once), then serves in the foreground
# until Ctrl+C. The PowerShell twin of kernel-web.service on Linux (docs/deploy.md).
# `scripts\run-web.ps1 -DryRun` prints the commands.
param([switch]$DryRun)
$ErrorActionPreference = 'Stop'
Set-Location (Join-Path $PSScriptRoot '..')

$config = if ($env:KERNEL_CONFIG) { $env:KERNEL_CONFIG } else { Join-Path $PWD 'config.toml' }
if (-not (Test-Path $config)) {
    Write-Output "No $config yet: run scripts\run.ps1 first (it creates and checks it)."
    exit 1
}
$env:KERNEL_CONFIG = $config
if (-not (Select-String -Path $config -Pattern '^\s*\[web\]' -Quiet)) {
    Write-Output @"
$config has no [web] section. Add one, then run this again:
  [web]
  listen = "127.0.0.1:8787"
"@
    exit 1
}

$target = if ($env:CARGO_TARGET_DIR) { $env:CARGO_TARGET_DIR } else { 'target' }
$web = Join-Path (Join-Path $target 'release') 'kernel-web.exe'
if ($DryRun) {
    Write-Output 'cargo build --release -p kernel-web --bin kernel-web'
    Write-Output "$web --check"
    Write-Output "$web --login-url"
    Write-Output $web
    exit 0
}

cargo build --release -p kernel-web --bin kernel-web
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
& $web --check | Out-Null
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
# The link needs kernel-agentd (scripts\run.ps1); without it, say so and still serve.
& $web --login-url
if ($LASTEXITCODE -ne 0) {
    Write-Output 'kernel-agentd is not reachable yet: start scripts\run.ps1, then run kernel-web --login-url (or send /web in Telegram).'
}
# Serves until Ctrl+C (kernel-web stops gracefully on Ctrl+C / Ctrl+Break / closing the console).
& $web
exit $LASTEXITCODE
