#!/usr/bin/env python3
"""Checks, before any build, that a Kernel config has the three values a first start needs.

Used by scripts/run and scripts/run.ps1: `python3 scripts/preflight.py CONFIG` exits 0 when the
bot token, the owner's user id and the default provider's API key are set (in the file or the
environment, as `--check` reads them), else 1 with one line per missing value. It checks only
what a fresh config lacks; the binaries' `--check` still validates the whole file after the build.
A Python without tomllib (< 3.11) skips the check (exit 0) with a note.
"""
import os
import re
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11: leave it to --check after the build
    print("note: Python < 3.11 cannot read TOML; the config is checked after the build")
    sys.exit(0)

EXAMPLE_USER = 123456789


def placeholder(value):
    """Empty, or the example's placeholder ("sk-ant-...", "…"), counts as not set."""
    v = str(value or "").strip()
    return v == "" or v.endswith("...") or v.endswith("\u2026")


def secret(file_value, env_name):
    env = os.environ.get(env_name, "")
    if not placeholder(env):
        return env
    return None if placeholder(file_value) else file_value


def main(path):
    try:
        with open(path, "rb") as f:
            raw = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"{path}: cannot read it: {e}")
        return 1
    missing = []
    telegram = raw.get("telegram") or {}
    if secret(telegram.get("token"), "KERNEL_TELEGRAM_TOKEN") is None:
        missing.append("telegram.token: your bot token from @BotFather (or set KERNEL_TELEGRAM_TOKEN)")
    user = telegram.get("allowed_user")
    if not isinstance(user, int) or user <= 0 or user == EXAMPLE_USER:
        missing.append("telegram.allowed_user: your numeric Telegram user id (message @userinfobot)")
    default = (raw.get("general") or {}).get("default_provider")
    provider = (raw.get("providers") or {}).get(default) if isinstance(default, str) else None
    if not isinstance(provider, dict):
        missing.append("general.default_provider: name a [providers.<name>] section")
    else:
        env = "KERNEL_PROVIDER_" + re.sub(r"[^A-Z0-9]", "_", default.upper()) + "_API_KEY"
        if secret(provider.get("api_key"), env) is None:
            missing.append(f"providers.{default}.api_key: the API key (or set {env})")
    if missing:
        print(f"{path} is not filled in yet; set, then run this again:")
        for line in missing:
            print(f"  - {line}")
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: preflight.py CONFIG")
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
