"""The composer and the judge give the same figures whatever Python's hash seed: nothing takes
an order from a set. A set's order changes with ``PYTHONHASHSEED`` (for strings), and a sum of
floats taken in that order changes in its last bits; where two sections tie in exact
arithmetic (two documents, one ahead on keywords, the other on the reader) those bits chose
the lead: ``t1_dispute_hard_211`` of the governance cases led with one study at
``PYTHONHASHSEED=0`` and the other at 1 or 2 (confidence 0.396 against 0.31;
docs/measurements/confidence.md). Each seed runs in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Two sources that disagree, as in the governance case, and a FAQ with several entries.
STUDY = (
    "Journal of Child Psychology and Psychiatry - Longitudinal Study (2024): A seven-year "
    "longitudinal study tracking 11,800 adolescents aged 11-18 across 340 schools found a "
    "robust causal relationship between social media screen time and the development of "
    "anxiety and depression. Each additional hour of daily social media use was associated "
    "with a 13% increase in clinically significant anxiety symptoms and a 9% increase in "
    "depressive symptoms. The relationship exhibited a dose-response pattern."
)
REVIEW = (
    "American Psychological Association - Comprehensive Evidence Review (2024): The task "
    "force on social media and adolescent mental health reviewed 412 studies and concluded "
    "that there is insufficient evidence to establish a causal link between screen time and "
    "anxiety or depression in adolescents. The majority of observed associations are small, "
    "and likely confounded by reverse causality and omitted variable bias. Randomized trials "
    "that reduced screen time showed no significant improvement in mental health."
)
FAQ = (
    "3.1 How do I stop the data stale warning? The data stale warning means the driver has "
    "not heard from the UPS within the allowed interval. Check the cable and restart the "
    "driver with upsdrvctl. "
    "3.2 Can several hosts monitor one UPS? Yes. Any number of hosts can run upsmon against "
    "the same upsd server, as long as each has a user in upsd.users. "
    "3.3 Why does my UPS beep on battery power? The UPS beeps when it runs on battery power "
    "during an outage. Most models let you silence the alarm with upscmd."
)
CASES = [
    ("Does screen time cause anxiety and depression in adolescents?", [STUDY, REVIEW]),
    ("Is daily social media use linked to depressive symptoms in adolescents?", [REVIEW, STUDY]),
    ("How do I silence the UPS alarm when it beeps on battery power?", [FAQ]),
    ("Can several hosts monitor the same UPS server with upsmon?", [FAQ]),
]

# Run in a child: every float as repr (all its bits), the lead's text, the judge's figures.
PROBE = """
import json, sys
from masis_core.answers import sections
from masis_core.answers.judgement import judge
from masis_core.answers.offline import render_answer

out = []
for question, texts in json.loads(sys.stdin.read()):
    evidence = [
        {"chunk_id": f"ws/d{i}/000000", "doc_id": f"d{i}", "filename": f"d{i}.txt",
         "page_start": 1, "page_end": 1, "text": t, "score": 0.6, "source": "kb"}
        for i, t in enumerate(texts)
    ]
    found, headings = sections.scored_windows(question, evidence)
    ranked = sections.rank(question, sections.group(found, headings))
    answer = render_answer(sections.compose(question, evidence))
    verdict = judge(question, answer, evidence, section=sections.ranking(question, evidence))
    out.append({
        "sections": [[repr(s.keywords), repr(s.meaning), repr(s.score)] for s in ranked],
        "answer": answer,
        "features": {k: repr(v) for k, v in sorted(verdict.features.items())},
        "probabilities": {k: repr(v) for k, v in sorted(verdict.probabilities.items())},
    })
print(json.dumps(out))
"""


def figures_under(seed: int) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=json.dumps(CASES),
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": str(seed), "MASIS_PROVIDER": "offline"},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(done.stdout)


def test_the_composer_and_the_judge_do_not_depend_on_the_hash_seed() -> None:
    first = figures_under(0)
    assert len(first) == len(CASES) and all(case["sections"] for case in first)
    for seed in (1, 2):
        assert figures_under(seed) == first, f"PYTHONHASHSEED={seed} differs from 0"
