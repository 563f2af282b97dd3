#!/usr/bin/env bash
# Download FAQ-style PDFs that no part of the workbench was fitted or tuned on into DIR, for
# the held-out check of issue 28 (bench/data/unseen-{answerable,unanswerable}.json):
#   debian-faq.en.pdf          the Debian GNU/Linux FAQ (debian-faq)
#   R-FAQ.pdf                  the R FAQ (r-doc-pdf; fetch-pdf-corpus.sh leaves it out of manuals/)
#   project-history.en.pdf     a brief history of Debian (debian-history)
# Needs apt-get (Debian). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, so a figure can name the exact files it was measured on.
set -euo pipefail
dir=${1:?usage: fetch-unseen-pdfs.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
if [ -z "$(ls -A "$dir")" ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get download -qq debian-faq r-doc-pdf debian-history >/dev/null 2>&1
  for deb in *.deb; do dpkg-deb -x "$deb" x; done
  gunzip -c x/usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz >"$dir/debian-faq.en.pdf"
  cp x/usr/share/R/doc/manual/R-FAQ.pdf "$dir/R-FAQ.pdf"
  cp x/usr/share/doc/debian-history/docs/project-history.en.pdf "$dir/project-history.en.pdf"
  for deb in *.deb; do dpkg-deb -f "$deb" Package Version | paste -sd' '; done
fi
(cd "$dir" && sha256sum -- *.pdf)
