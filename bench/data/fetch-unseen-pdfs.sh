#!/usr/bin/env bash
# Download FAQ-style PDFs that no part of the workbench was fitted or tuned on into DIR, for
# the held-out check of issue 28 (bench/data/unseen-{answerable,unanswerable}.json):
#   debian-faq.en.pdf          the Debian GNU/Linux FAQ (debian-faq)
#   R-FAQ.pdf                  the R FAQ (r-doc-pdf; fetch-pdf-corpus.sh leaves it out of manuals/)
#   project-history.en.pdf     a brief history of Debian (debian-history)
# Needs apt-get (Debian). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, so a figure can name the exact files it was measured on.
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-unseen-pdfs.sh DIR}"; then
  debs_unpack debian-faq r-doc-pdf debian-history
  gunzip -c x/usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz >"$dir/debian-faq.en.pdf"
  cp x/usr/share/R/doc/manual/R-FAQ.pdf "$dir/R-FAQ.pdf"
  cp x/usr/share/doc/debian-history/docs/project-history.en.pdf "$dir/project-history.en.pdf"
  debs_versions
fi
(cd "$dir" && sha256sum -- *.pdf)
