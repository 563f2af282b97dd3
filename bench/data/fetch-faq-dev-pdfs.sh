#!/usr/bin/env bash
# Make FAQ-style development PDFs in DIR (bench/data/faq-dev-{answerable,unanswerable}.json):
# the Python FAQ's general, design, library and programming pages (python3.11-doc) and
# gitfaq (git-doc), printed to PDF by headless Chromium. Development data: fit on these, never
# on the unseen FAQ PDFs (fetch-unseen-pdfs.sh). Another Chromium may break pages elsewhere:
# the gold pages were read off Chromium 156's print of python3.11-doc 3.11.2-6+deb12u9 and
# git-doc 1:2.39.5-0+deb12u3 (8, 13, 7, 12 and 35 pages; two prints had the same page texts,
# though their bytes differ by a creation date). Needs apt-get and chromium.
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-faq-dev-pdfs.sh DIR}"; then
  debs_unpack python3.11-doc git-doc
  print() {
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$work/profile" --no-pdf-header-footer --print-to-pdf="$dir/$2" \
      "file://$work/x/$1" 2>/dev/null
  }
  for page in general design library programming; do
    print "usr/share/doc/python3.11/html/faq/$page.html" "python-faq-$page.pdf"
  done
  print usr/share/doc/git-doc/gitfaq.html gitfaq.pdf
  debs_versions
fi
ls -l "$dir"
