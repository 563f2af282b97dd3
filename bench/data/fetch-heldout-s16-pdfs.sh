#!/usr/bin/env bash
# Download the held-out PDFs of session 16 into DIR (heldout-s16-{answerable,unanswerable}.json).
# No part of the workbench was fitted, tuned or calibrated on them; keep it that way (run the
# workbench on them once, at the end):
#   gpredict.pdf         manual: the Gpredict user manual (updated for Gpredict 2.0), 64 pages,
#                        PDF outline (gpredict; shipped gzipped)
#   treepuzzle.pdf       manual: the TREE-PUZZLE 5.2 manual, 51 pages, PDF outline
#                        (tree-puzzle-doc)
#   strucplot.pdf        report: "The Strucplot Framework: Visualizing Multi-way Contingency
#                        Tables with vcd" (JSS paper as vignette), 48 pages, PDF outline (r-cran-vcd)
# Needs apt-get (Debian 12). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, and warns when a file differs from the one the gold pages were
# read off (gpredict 2.3-72-gc596101-3, tree-puzzle-doc 5.3~rc16+dfsg-9, r-cran-vcd 1:1.4-11-1).
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-heldout-s16-pdfs.sh DIR}"; then
  debs_unpack gpredict tree-puzzle-doc r-cran-vcd
  gunzip -c x/usr/share/doc/gpredict/gpredict-user-manual.pdf.gz >"$dir/gpredict.pdf"
  cp x/usr/share/doc/tree-puzzle/tree-puzzle.pdf "$dir/treepuzzle.pdf"
  cp x/usr/lib/R/site-library/vcd/doc/strucplot.pdf "$dir/strucplot.pdf"
  debs_versions
fi
debs_check <<'SUMS'
177330786df7b0ce64186f85a569422749df8f7cc5342bc328b93ca45b24734b  gpredict.pdf
b1f4c80b73fd395785c2624a7c888f5d0e05aa18a803526781d77413255f7ce3  treepuzzle.pdf
45dd7f7b8d6f3f5ca1816a585bb0e8410c4fe02c50876cd5174069b70a724b8c  strucplot.pdf
SUMS
