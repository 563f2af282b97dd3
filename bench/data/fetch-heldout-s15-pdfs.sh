#!/usr/bin/env bash
# Download the held-out PDFs of session 15 into DIR (heldout-s15-{answerable,unanswerable}.json).
# No part of the workbench was fitted, tuned or calibrated on them; keep it that way (run the
# workbench on them once, at the end):
#   gmsh.pdf             FAQ: the Gmsh 4.8.4 reference manual, whose Appendix F "Frequently asked
#                        questions" (pp. 341-347) is made of question headings, 390 pages (gmsh-doc)
#   umfpack.pdf          manual: the UMFPACK User Guide, version 5.7.9, 140 pages, no outline
#                        (libsuitesparse-doc)
#   infernal.pdf         report/tutorial: the Infernal 1.1.4 User's Guide, 117 pages, no outline
#                        (infernal-doc)
# Needs apt-get (Debian 12). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, and warns when a file differs from the one the gold pages were
# read off (gmsh-doc 4.8.4+ds2-3, libsuitesparse-doc 1:5.12.0+dfsg-2, infernal-doc 1.1.4-1).
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-heldout-s15-pdfs.sh DIR}"; then
  debs_unpack gmsh-doc libsuitesparse-doc infernal-doc
  gunzip -c x/usr/share/doc/gmsh-doc/gmsh.pdf.gz >"$dir/gmsh.pdf"
  cp x/usr/share/doc/libsuitesparse-dev/UMFPACK_UserGuide.pdf "$dir/umfpack.pdf"
  cp x/usr/share/doc/infernal/Userguide.pdf "$dir/infernal.pdf"
  debs_versions
fi
debs_check <<'SUMS'
2f1b8c6fb50aadaf099b731762f64e3b3fafd039dce92b8d906549b771d90eb8  gmsh.pdf
892d8f28b264134f5d03cd7717908aab4a987e8b9e633eba11d7cb76b78754a3  umfpack.pdf
752605bf4a8bb9bbd487a791a7f6122c024915bdf9911d076f84878a0fee2843  infernal.pdf
SUMS
