#!/usr/bin/env bash
# Download the held-out PDFs of session 14 into DIR (heldout-s14-{answerable,unanswerable}.json).
# No part of the workbench was fitted, tuned or calibrated on them; keep it that way (run the
# workbench on them once, at the end):
#   flex.pdf             FAQ: "Lexical Analysis With Flex", flex 2.6.4; its FAQ chapter (pp. 83-125)
#                        is made of question headings, 140 pages (flex-doc)
#   amc.pdf              manual: the Auto Multiple Choice 1.6.0 documentation, 101 pages
#                        (auto-multiple-choice-doc-pdf)
#   mrbayes.pdf          report/tutorial: "MrBayes version 3.2 Manual: Tutorials and Model
#                        Summaries", 174 pages, no outline (mrbayes-doc)
# Needs apt-get (Debian 12). Safe to re-run: a filled folder is left as it is. Prints each file's
# package version and SHA-256, and warns when a file differs from the one the gold pages were
# read off (flex-doc 2.6.4-8.2, auto-multiple-choice-doc-pdf 1.6.0-1, mrbayes-doc 3.2.7a-6).
set -euo pipefail
. "$(dirname "$0")/debs.sh"
if debs_start "${1:?usage: fetch-heldout-s14-pdfs.sh DIR}"; then
  debs_unpack flex-doc auto-multiple-choice-doc-pdf mrbayes-doc
  gunzip -c x/usr/share/doc/flex-doc/flex.pdf.gz >"$dir/flex.pdf"
  cp x/usr/share/doc/auto-multiple-choice/auto-multiple-choice.en.pdf "$dir/amc.pdf"
  cp x/usr/share/doc/mrbayes/Manual_MrBayes_v3.2.pdf "$dir/mrbayes.pdf"
  debs_versions
fi
debs_check <<'SUMS'
d4c4021c02bf7cae2f2756876ff906302caa93ca309f295e0554c23ce050e177  flex.pdf
dc69b1bcd7b2b601ae05d84cd52f155d12eb8d340407c7e2eb469ce4647ef0f8  amc.pdf
2755675698bfe01b80e3c43345d3540a764f17c843ce1ea756329de7703e5e03  mrbayes.pdf
SUMS
