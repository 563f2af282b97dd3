#!/usr/bin/env bash
# Download the held-out PDFs of issue 51 into DIR (heldout51-{answerable,unanswerable}.json).
# No part of the workbench was fitted, tuned or calibrated on them; keep it that way (run the
# workbench on them once, at the end):
#   Rcpp-FAQ.pdf                  FAQ: the Rcpp FAQ vignette, 14 pages, no outline (r-cran-rcpp)
#   gutenprint-users-manual.pdf   manual: Gutenprint 5.2 User's Manual, 73 pages (gutenprint-doc)
#   lshort.pdf                    tutorial: The Not So Short Introduction to LaTeX, 153 pages
#                                 (texlive-lang-english, a 182 MB package)
# Needs apt-get (Debian 12). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, and warns when a file differs from the one the gold pages were
# read off (r-cran-rcpp 1.0.10-1, gutenprint-doc 5.3.4.20220624T01008808d602-1,
# texlive-lang-english 2022.20230122-1).
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-heldout51-pdfs.sh DIR}"; then
  debs_unpack r-cran-rcpp gutenprint-doc texlive-lang-english
  cp x/usr/lib/R/site-library/Rcpp/doc/Rcpp-FAQ.pdf "$dir/Rcpp-FAQ.pdf"
  cp x/usr/share/doc/gutenprint-doc/gutenprint-users-manual.pdf "$dir/gutenprint-users-manual.pdf"
  cp x/usr/share/doc/texlive-doc/latex/lshort-english/lshort.pdf "$dir/lshort.pdf"
  debs_versions
fi
debs_check <<'SUMS'
65716698ef08a34c7a33883289d74f33b9defb45f66dc8f9e63fb42a45389e40  Rcpp-FAQ.pdf
e9f4a85ecce576c1dcbb9236e710d0e1256c0f5642bb06ad91251b15410194d8  gutenprint-users-manual.pdf
ecef13f225de55549ee5214f70cca30998f3251dee65c6b00931aae18b7736c2  lshort.pdf
SUMS
