#!/usr/bin/env bash
# Download the held-out PDFs of session 12 into DIR (heldout-s12-{answerable,unanswerable}.json).
# No part of the workbench was fitted, tuned or calibrated on them; keep it that way (run the
# workbench on them once, at the end):
#   zoo-faq.pdf   FAQ: the zoo FAQ vignette, 15 pages, no outline (r-cran-zoo)
#   gmpl.pdf      manual: GNU MathProg language reference for GLPK 5.0, 74 pages (glpk-doc)
#   lmer.pdf      report/tutorial: "Fitting Linear Mixed-Effects Models Using lme4", 51 pages
#                 (r-cran-lme4)
# Needs apt-get (Debian 12). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, and warns when a file differs from the one the gold pages were
# read off (r-cran-zoo 1.8-11-1, glpk-doc 5.0-1, r-cran-lme4 1.1-31-1).
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-heldout-s12-pdfs.sh DIR}"; then
  debs_unpack r-cran-zoo glpk-doc r-cran-lme4
  cp x/usr/lib/R/site-library/zoo/doc/zoo-faq.pdf "$dir/zoo-faq.pdf"
  cp x/usr/share/doc/glpk-doc/gmpl.pdf "$dir/gmpl.pdf"
  cp x/usr/lib/R/site-library/lme4/doc/lmer.pdf "$dir/lmer.pdf"
  debs_versions
fi
debs_check <<'SUMS'
10441a849d6dcd7901cdeca635d798ac6171e005a1530693d0228c6550fb6087  zoo-faq.pdf
df54ba811d1fe3c041447b575997298d63b0a6366e39454ef2efc382f08203c2  gmpl.pdf
d13d6caf549b44c3543d01a7445c327ac472d266a8aee24f68a8d31d45d02ec9  lmer.pdf
SUMS
