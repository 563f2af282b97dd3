# Sourced by the fetch-*.sh scripts here: the frame they share for documents shipped in Debian
# packages (apt-get download, dpkg-deb -x; no root needed). Each script keeps only its packages,
# the files it copies out of ./x and the SHA-256 sums its gold pages were read off.

# debs_start DIR: DIR made and absolute in $dir; a scratch folder $work, removed on exit, as the
# working directory. Fails (returns 1) when DIR is already filled: it is left as it is.
debs_start() {
  mkdir -p "$1"
  dir=$(cd "$1" && pwd)
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cd "$work"
  [ -z "$(ls -A "$dir")" ]
}

# debs_unpack PACKAGE...: the packages downloaded and unpacked under ./x.
debs_unpack() {
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get download -qq "$@" >/dev/null 2>&1
  for deb in *.deb; do dpkg-deb -x "$deb" x; done
}

# debs_versions: each downloaded package's name and version, one line each.
debs_versions() {
  for deb in *.deb; do dpkg-deb -f "$deb" Package Version | paste -sd' '; done
}

# debs_check: every PDF's SHA-256, then a warning unless they match the sums on stdin.
debs_check() {
  (cd "$dir" && sha256sum -- *.pdf)
  (cd "$dir" && sha256sum --quiet -c -) ||
    echo "warning: a PDF differs from the one the gold pages were read off" >&2
}
