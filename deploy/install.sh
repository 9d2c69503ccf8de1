#!/usr/bin/env bash
# Installs Kernel (kernel-agentd + kernel-tg) as two systemd services on Debian 12.
# Idempotent: run it again to upgrade the binaries and units; config, secrets and data are kept.
# See --help, and README.md "Deploy on Debian 12".
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

user=kernel
bindir=/usr/local/bin
confdir=/etc/kernel
datadir=/var/lib/kernel
unitdir=/etc/systemd/system
workspace=""
prebuilt=""
destdir=""
dry_run=0
enable=1
binaries=(kernel-agentd kernel-tg)
units=(kernel-agentd.service kernel-tg.service)

usage() {
  cat <<'EOF'
Usage: deploy/install.sh [OPTIONS]

Installs kernel-agentd and kernel-tg as systemd services (Debian 12):
  - builds release binaries with cargo (or takes prebuilt ones) into /usr/local/bin
  - creates the system user `kernel` (home and data dir /var/lib/kernel, 0700)
  - creates /etc/kernel/config.toml (0600, owner kernel) from config.example.toml if absent,
    with data_dir and default_workspace set to absolute paths, and SOUL.md next to it
  - creates /etc/kernel/secrets.env (root:root 0600) as a commented template if absent
  - creates the workspace for delegated CLI work (owner kernel) if absent
  - installs the units into /etc/systemd/system, lets agentd write the workspace
    (kernel-agentd.service.d/workspace.conf), and enables both units
  - restarts the services if they are running (an upgrade); otherwise says how to start them
Running it again changes nothing that is already in place, except binaries and units.

Options:
  --prebuilt DIR    take kernel-agentd and kernel-tg from DIR (e.g. target/release) instead of
                    running `cargo build --release`
  --workspace DIR   the workspace delegated CLIs may write (default: general.default_workspace
                    of an existing config, else /srv/kernel)
  --bindir DIR      where the binaries go (default /usr/local/bin)
  --no-enable       install, but neither enable nor restart the units
  --destdir DIR     stage every file under DIR (packaging, tests): no user is created, no owner
                    is changed, systemd is not touched
  --with-web        also install the web console, kernel-web, as a third unit
                    (kernel-web.service; it serves web.listen, loopback only)
  --dry-run         print what would be done and change nothing
  -h, --help        this text
EOF
}

die() {
  echo "install.sh: $*" >&2
  exit 2
}

while [[ $# -gt 0 ]]; do
  case "$1" in
    --prebuilt) prebuilt="${2:?--prebuilt needs a directory}"; shift 2 ;;
    --workspace) workspace="${2:?--workspace needs a directory}"; shift 2 ;;
    --bindir) bindir="${2:?--bindir needs a directory}"; shift 2 ;;
    --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
    --no-enable) enable=0; shift ;;
    --dry-run) dry_run=1; shift ;;
    --with-web) binaries+=(kernel-web); units+=(kernel-web.service); shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

for dir in "$bindir" "$workspace"; do
  [[ -z "$dir" || "$dir" == /* ]] || die "$dir: give an absolute path"
done
if [[ -n "$destdir" ]]; then
  destdir="$(realpath -m "$destdir")"
fi
if [[ "$dry_run" -eq 0 && -z "$destdir" && "$(id -u)" -ne 0 ]]; then
  die "run it as root (sudo), or with --dry-run to see what it would do"
fi
# Systemd and ownership are only touched in a real install.
system=0
if [[ -z "$destdir" ]]; then system=1; fi

# --- helpers: every change goes through one of these, so --dry-run shows it -------------------

say() { echo "==> $*"; }

# Runs a command, or prints it under --dry-run.
run() {
  if [[ "$dry_run" -eq 1 ]]; then
    echo "+ $*"
  else
    "$@"
  fi
}

# Runs a command that needs a real system (root, systemd); skipped with --destdir.
run_system() {
  if [[ "$system" -eq 1 ]]; then
    run "$@"
  else
    echo "(skipped with --destdir) $*"
  fi
}

# A directory, created with mode and owner if missing. An existing one is left as it is, unless
# `enforce` is given: then its mode and owner are set again (the dirs Kernel owns).
make_dir() {
  local path="$1" mode="$2" owner="$3" enforce="${4:-}"
  if [[ -d "$destdir$path" && -z "$enforce" ]]; then
    return
  fi
  if [[ ! -d "$destdir$path" ]]; then
    run mkdir -p "$destdir$path"
  fi
  run chmod "$mode" "$destdir$path"
  run_system chown "$owner" "$destdir$path"
}

# Writes stdin to a file (atomically) with mode and owner.
write_file() {
  local path="$1" mode="$2" owner="$3"
  if [[ "$dry_run" -eq 1 ]]; then
    local text lines
    text="$(cat)"
    lines="$(printf '%s\n' "$text" | wc -l)"
    echo "+ write $destdir$path (mode $mode, owner $owner, $lines lines)"
    if [[ "$lines" -le 10 ]]; then printf '%s\n' "$text" | sed 's/^/    | /'; fi
    return
  fi
  local tmp
  tmp="$(mktemp "$destdir$path.XXXXXX")"
  cat >"$tmp"
  chmod "$mode" "$tmp"
  if [[ "$system" -eq 1 ]]; then chown "$owner" "$tmp"; fi
  mv -f "$tmp" "$destdir$path"
}

# A file's mode and owner, enforced on an existing file.
fix_file() {
  local path="$1" mode="$2" owner="$3"
  run chmod "$mode" "$destdir$path"
  run_system chown "$owner" "$destdir$path"
}

# The value of `key = "..."` in config.toml's [general] table (empty when absent).
general_value() {
  local key="$1" file="$2"
  awk -v key="$key" '
    /^[[:space:]]*\[/ { general = ($0 ~ /^[[:space:]]*\[general\][[:space:]]*(#.*)?$/) }
    general && $0 ~ "^[[:space:]]*" key "[[:space:]]*=" {
      sub(/^[^=]*=[[:space:]]*"/, ""); sub(/".*$/, ""); print; exit
    }' "$file"
}

# `path` made absolute against the config folder (how Kernel resolves relative paths).
absolute() {
  case "$1" in
    /*) echo "$1" ;;
    .) echo "$confdir" ;;
    *) echo "$confdir/${1#./}" ;;
  esac
}

# --- the steps --------------------------------------------------------------------------------

config="$confdir/config.toml"
if [[ -z "$workspace" ]]; then
  existing=""
  if [[ -f "$destdir$config" ]]; then
    existing="$(general_value default_workspace "$destdir$config")"
  fi
  if [[ -n "$existing" ]]; then workspace="$(absolute "$existing")"; else workspace=/srv/kernel; fi
fi
[[ "$workspace" != *[[:space:]]* ]] || die "$workspace: a workspace path without spaces, please"
if [[ -f "$destdir$config" ]]; then
  configured="$(general_value default_workspace "$destdir$config")"
  if [[ -n "$configured" && "$(absolute "$configured")" != "$workspace" ]]; then
    echo "warning: $config has default_workspace = \"$configured\", but agentd may only write" \
      "$workspace: make them agree" >&2
  fi
fi

if [[ -n "$prebuilt" ]]; then
  src="$(cd "$prebuilt" && pwd)" || die "--prebuilt $prebuilt: no such directory"
else
  say "building release binaries"
  command -v cargo >/dev/null || die "cargo not found: install Rust, or build elsewhere and use --prebuilt DIR"
  packages=()
  for bin in "${binaries[@]}"; do packages+=(-p "$bin"); done
  run cargo build --release --locked --manifest-path "$repo/Cargo.toml" "${packages[@]}"
  src="$repo/target/release"
fi
for bin in "${binaries[@]}"; do
  [[ -x "$src/$bin" || "$dry_run" -eq 1 ]] || die "$src/$bin is missing or not executable"
done

say "system user $user"
if getent passwd "$user" >/dev/null; then
  echo "user $user exists"
else
  run_system useradd --system --user-group --home-dir "$datadir" --no-create-home \
    --shell /usr/sbin/nologin --comment "Kernel personal assistant" "$user"
fi

say "directories"
make_dir "$datadir" 0700 "$user:$user" enforce
make_dir "$confdir" 0750 "root:$user" enforce
make_dir "$workspace" 0750 "$user:$user"
make_dir "$bindir" 0755 root:root
make_dir "$unitdir" 0755 root:root

say "binaries into $bindir"
for bin in "${binaries[@]}"; do
  run install -m 0755 "$src/$bin" "$destdir$bindir/$bin"
done

say "configuration in $confdir"
if [[ -f "$destdir$config" ]]; then
  echo "$config exists: kept"
  fix_file "$config" 0600 "$user:$user"
else
  sed -e "s|^data_dir = \"data\"|data_dir = \"$datadir\"|" \
    -e "s|^default_workspace = \"\\.\"|default_workspace = \"$workspace\"|" \
    "$repo/config.example.toml" | write_file "$config" 0600 "$user:$user"
fi
if [[ -f "$destdir$confdir/SOUL.md" ]]; then
  echo "$confdir/SOUL.md exists: kept"
else
  write_file "$confdir/SOUL.md" 0640 "root:$user" <"$repo/SOUL.md"
fi
secrets="$confdir/secrets.env"
if [[ -f "$destdir$secrets" ]]; then
  echo "$secrets exists: kept"
  fix_file "$secrets" 0600 root:root
else
  write_file "$secrets" 0600 root:root <<'EOF'
# Kernel's secrets, read by systemd (as root) before it starts the services as user `kernel`:
# neither the service user nor a CLI it delegates to can read this file. root:root 0600.
# The environment wins over config.toml; leave the config's placeholders ("...") as they are.
#KERNEL_TELEGRAM_TOKEN=123456789:AA...
#KERNEL_PROVIDER_ANTHROPIC_API_KEY=sk-ant-...
#KERNEL_PROVIDER_OPENAI_API_KEY=sk-...
#KERNEL_TITLES_API_KEY=sk-ant-...
#KERNEL_AGENTD_TOKEN=
#KERNEL_STT_API_KEY=
#KERNEL_TTS_API_KEY=
# A delegated CLI needs its own credentials; these are passed on to it:
#ANTHROPIC_API_KEY=
#OPENAI_API_KEY=
EOF
fi

say "systemd units into $unitdir"
for unit in "${units[@]}"; do
  sed "s|/usr/local/bin/|$bindir/|g" "$repo/deploy/$unit" |
    write_file "$unitdir/$unit" 0644 root:root
done
make_dir "$unitdir/kernel-agentd.service.d" 0755 root:root
write_file "$unitdir/kernel-agentd.service.d/workspace.conf" 0644 root:root <<EOF
# Written by deploy/install.sh: the workspace delegated CLIs work in (general.default_workspace).
# "-": a missing workspace does not keep the service from starting.
[Service]
ReadWritePaths=-$workspace
EOF
if [[ "$system" -eq 1 && "$dry_run" -eq 0 ]] &&
  ! runuser -u "$user" -- test -w "$workspace"; then
  echo "warning: $user cannot write $workspace: delegated CLIs will fail to change files there" >&2
fi

# The example config runs Claude Code's shell commands in its sandbox (bubblewrap + socat on
# Linux); without them the CLI refuses to start. Codex brings its own bubblewrap.
for program in bwrap socat; do
  if ! command -v "$program" >/dev/null 2>&1; then
    echo "warning: $program is missing: Claude Code's sandbox cannot run (apt install bubblewrap socat)" >&2
  fi
done

if [[ "$system" -eq 1 && "$dry_run" -eq 0 && ! -d /run/systemd/system ]]; then
  echo "warning: systemd is not running here: the units are installed but not enabled" >&2
  enable=0
fi
if [[ "$enable" -eq 1 ]]; then
  say "enabling the units"
  run_system systemctl daemon-reload
  run_system systemctl enable "${units[@]}"
  # An upgrade: restart what runs; a first install starts nothing before the config is filled.
  run_system systemctl try-restart "${units[@]}"
fi

say "done"
cat <<EOF
Next:
  1. Fill in $config (allowed_user, providers, ...) and put the secrets into $secrets.
  2. Check it as the service will run it (user $user, secrets from $secrets):
       sudo systemd-run --pipe --wait --quiet -p User=$user -p EnvironmentFile=$secrets \\
         $bindir/kernel-agentd --config $config --check
  3. Start:     sudo systemctl start kernel-agentd kernel-tg
  4. Logs:      journalctl -u kernel-agentd -u kernel-tg -f   (also $datadir/logs/)
EOF
