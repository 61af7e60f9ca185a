#!/usr/bin/env bash
# script/debian-source (what script/bootstrap adds <codename>-backports from) on apt
# configurations written here: deb822 and one-line sources, disabled and deb-src stanzas,
# suites that only start with the codename, inline keys, bracketed options; nothing found.
# Usage: tests/script/debian_source_test.sh SOURCE_DIR
set -uo pipefail
src="${1:?usage: debian_source_test.sh SOURCE_DIR}"
tool="$src/script/debian-source"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect NAME SUITE WANT: the tool's output on $tmp/NAME for SUITE must be WANT exactly.
expect() {
  local got
  got=$("$tool" "$2" "$tmp/$1")
  local status=$?
  if [[ $status -ne 0 || "$got" != "$3" ]]; then
    printf 'FAIL %s %s: got [%s] (exit %d), want [%s]\n' "$1" "$2" "$got" "$status" "$3"
    failures=$((failures + 1))
  else
    printf 'ok   %s %s\n' "$1" "$2"
  fi
}
tab=$'\t'

# The Debian 12 container layout: deb822, bookworm and bookworm-updates in one stanza, the
# security archive in the next; a third-party one-line source whose suite contains the codename.
mkdir -p "$tmp/deb822/sources.list.d"
cat > "$tmp/deb822/sources.list.d/debian.sources" <<'X'
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
X
echo "deb https://packages.example.com/apt cloud-sdk-bookworm main" \
  > "$tmp/deb822/sources.list.d/other.list"
expect deb822 bookworm "http://deb.debian.org/debian${tab}/usr/share/keyrings/debian-archive-keyring.gpg"
expect deb822 bookworm-updates "http://deb.debian.org/debian${tab}/usr/share/keyrings/debian-archive-keyring.gpg"
expect deb822 bookworm-security "http://deb.debian.org/debian-security${tab}/usr/share/keyrings/debian-archive-keyring.gpg"
expect deb822 bookworm-backports ""
expect deb822 cloud-sdk-bookworm "https://packages.example.com/apt${tab}"
expect deb822 trixie ""

# deb822 stanzas that must not be taken: disabled, deb-src only, a suite that merely starts with
# the codename; then one with lower-case field names, a continued URIs field (the first URI is
# taken), and its key inline (a multi-line Signed-By: the default keyring is used instead).
mkdir -p "$tmp/skip/sources.list.d"
cat > "$tmp/skip/sources.list.d/a.sources" <<'X'
Types: deb
URIs: http://disabled.example/debian
Suites: bookworm
Enabled: no

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm

Types: deb
URIs: http://prefix.example/debian
Suites: bookworm-security bookwormish
X
cat > "$tmp/skip/sources.list.d/b.sources" <<'X'
types: deb-src deb
uris: http://mirror.example/debian
 http://second.example/debian
suites:	bookworm
components: main
signed-by:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBGPL0BUBEADmW5NdOOHwPIJlgPu6JDcKw/NZJPR8lsD3K87ZM18gzyQZJD+w
 -----END PGP PUBLIC KEY BLOCK-----
X
expect skip bookworm "http://mirror.example/debian${tab}"

# One-line sources: deb-src and commented lines skipped, bracketed options with signed-by (glued
# to the bracket or standing apart), a later file not consulted once one matched.
mkdir -p "$tmp/oneline/sources.list.d"
cat > "$tmp/oneline/sources.list" <<'X'
# deb http://commented.example/debian bookworm main
deb-src http://src.example/debian bookworm main
deb [arch=amd64 signed-by=/etc/apt/keyrings/debian.gpg] http://one.example/debian bookworm main
deb [ signed-by=/k.gpg ] http://two.example/debian bookworm-backports main
X
echo "deb http://three.example/debian bookworm main" > "$tmp/oneline/sources.list.d/z.list"
expect oneline bookworm "http://one.example/debian${tab}/etc/apt/keyrings/debian.gpg"
expect oneline bookworm-backports "http://two.example/debian${tab}/k.gpg"

# deb822 is read before the one-line files.
mkdir -p "$tmp/both/sources.list.d"
echo "deb http://oneline.example/debian bookworm main" > "$tmp/both/sources.list"
printf 'Types: deb\nURIs: http://deb822.example/debian\nSuites: bookworm\n' \
  > "$tmp/both/sources.list.d/d.sources"
expect both bookworm "http://deb822.example/debian${tab}"

# No apt configuration at all: nothing printed, exit 0 (bootstrap then says what is missing).
mkdir -p "$tmp/empty"
expect empty bookworm ""

# Usage errors: exit 2.
if "$tool" >/dev/null 2>&1 || [[ $? -ne 2 ]]; then
  echo "FAIL no arguments: want exit 2"
  failures=$((failures + 1))
fi

if ((failures)); then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
