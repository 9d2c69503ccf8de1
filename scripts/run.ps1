# Sets up and runs Kernel from .\config.toml (or $env:KERNEL_CONFIG) on Windows: checks that the
# config is filled in (before any build, scripts\preflight.py, when Python is found), builds both
# binaries, checks the whole config, starts kernel-agentd, then kernel-tg in the foreground. Ctrl+C
# stops both. The PowerShell twin of scripts/run. `scripts\run.ps1 -DryRun` prints the commands.
param([switch]$DryRun)
$ErrorActionPreference = 'Stop'
Set-Location (Join-Path $PSScriptRoot '..')

$config = if ($env:KERNEL_CONFIG) { $env:KERNEL_CONFIG } else { Join-Path $PWD 'config.toml' }
if (-not (Test-Path $config)) {
    Copy-Item config.example.toml $config
    Write-Output @"
Created $config from config.example.toml. Fill in, then run this again:
  - telegram.token          your bot token from @BotFather (or set KERNEL_TELEGRAM_TOKEN)
  - telegram.allowed_user   your numeric Telegram user id (message @userinfobot to learn it)
  - providers.<default>.api_key for general.default_provider
                            (or set KERNEL_PROVIDER_<NAME>_API_KEY)
"@
    exit 1
}
$env:KERNEL_CONFIG = $config

# The three values a first start needs, checked before the (10+ minute) first build.
$python = Get-Command python3, python -ErrorAction SilentlyContinue | Select-Object -First 1
if ($DryRun) {
    Write-Output "python scripts\preflight.py $config"
} elseif ($python) {
    & $python.Source (Join-Path 'scripts' 'preflight.py') $config
    if ($LASTEXITCODE -ne 0) { exit 1 }
}

$target = if ($env:CARGO_TARGET_DIR) { $env:CARGO_TARGET_DIR } else { 'target' }
$bin = Join-Path $target 'release'
$agentd = Join-Path $bin 'kernel-agentd.exe'
$tg = Join-Path $bin 'kernel-tg.exe'
if ($DryRun) {
    Write-Output 'cargo build --release -p kernel-agentd --bin kernel-agentd -p kernel-tg --bin kernel-tg'
    Write-Output "$agentd --check"
    Write-Output "$tg --check"
    Write-Output "$agentd (in the background)"
    Write-Output $tg
    exit 0
}

cargo build --release -p kernel-agentd --bin kernel-agentd -p kernel-tg --bin kernel-tg
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
foreach ($binary in @($agentd, $tg)) {
    & $binary --check | Out-Null
    if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
}

$daemon = Start-Process -FilePath $agentd -NoNewWindow -PassThru
try {
    # kernel-tg waits for agentd's pipe, then polls Telegram until Ctrl+C.
    & $tg
} finally {
    if (-not $daemon.HasExited) { Stop-Process -Id $daemon.Id }
}
