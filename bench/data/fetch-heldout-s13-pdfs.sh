#!/usr/bin/env bash
# Download the held-out PDFs of session 13 into DIR (heldout-s13-{answerable,unanswerable}.json).
# No part of the workbench was fitted, tuned or calibrated on them; keep it that way (run the
# workbench on them once, at the end):
#   bacula-problems.pdf  FAQ: the Bacula Problem Resolution Guide (a 36-question FAQ chapter, then
#                        tips, tape testing, firewalls, crashes), 66 pages (bacula-doc)
#   sdccman.pdf          manual: SDCC Compiler User Guide, SDCC 4.2.0, 134 pages (sdcc-doc)
#   longintro.pdf        report/tutorial: "An Introduction to Recursive Partitioning Using the
#                        RPART Routines", 60 pages, no outline (r-cran-rpart)
# Needs apt-get (Debian 12). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, and warns when a file differs from the one the gold pages were
# read off (bacula-doc 9.6.7-2, sdcc-doc 4.2.0+dfsg-1, r-cran-rpart 4.1.19-1).
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-heldout-s13-pdfs.sh DIR}"; then
  debs_unpack bacula-doc sdcc-doc r-cran-rpart
  gunzip -c x/usr/share/doc/bacula-doc/pdf/problems.pdf.gz >"$dir/bacula-problems.pdf"
  gunzip -c x/usr/share/doc/sdcc-doc/sdccman.pdf.gz >"$dir/sdccman.pdf"
  cp x/usr/lib/R/library/rpart/doc/longintro.pdf "$dir/longintro.pdf"
  debs_versions
fi
debs_check <<'SUMS'
63319678793a9917d952d621de7bb348cbdd2db1bbe3ad7222549a63e728acce  bacula-problems.pdf
8887f9fd940ee8aabe9429c28b53f264669f5c2c406688baf4b3d6c49438b2fb  sdccman.pdf
1c317118473a2b93c3232da610e37bdb45592e948a3efd4059202fee0fcd4d27  longintro.pdf
SUMS
