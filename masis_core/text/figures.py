"""What counts as a number and as a year, in one place.

Each reader of figures needs its own shape of "a number", and the shapes differ on purpose:
named here side by side, each says what it is for and why it is not one of the others. None is
a duplicate of another; each moved here unchanged.
"""

from __future__ import annotations

import re

# -- numbers ---------------------------------------------------------------------------------
# A figure that stands alone in prose, signed, with thousands separators, a decimal part and a
# percent sign: digits inside a path or identifier ("plant/000001") or a fraction's numerator
# are not one. For comparing the figures two texts state (``sentences.numbers``).
STANDALONE = re.compile(r"(?<![\w./])[-+]?\d[\d,]*(?:\.\d+)?%?(?!/)")

# A word of a line that is wholly numeric, with the punctuation a statistic carries ("(12.5)",
# "3:2", "1990-95", "4x", "12%;"): the segmenter counts them to tell a line of figures (a
# table row, a timetable) from prose.
NUMERIC_WORD = re.compile(r"^[-+(]*\d[\d.,:/%x-]*[)]*[.,;:]?$")

# A word that is a bare number ("12", "4.5", "30%", "5+"), nothing around it: a run of them is
# a table's column of figures, where NUMERIC_WORD would also take times and ranges.
BARE_NUMBER = re.compile(r"^[-+]?\d[\d.]*[+%]?$")

# A word that opens with a figure: a statistic's value ("-3.2 %", "(12)").
STARTS_WITH_FIGURE = re.compile(r"^[-+(]*\d")

# A run of digits with its separators, greedy and unanchored ("1,200.", "4.2.2"): the figures
# a question gives, and a text's figures beyond them; callers strip trailing punctuation and
# tell version numbers (two dots) apart themselves.
DIGIT_RUN = re.compile(r"\d[\d,.]*")

# The question's own figures as the judge looks them up in the evidence: a run that ends on a
# digit, so "3." at a sentence's end is "3", and a single digit alone.
QUESTION_FIGURE = r"\d[\d,.]*\d|\d"

# A figure followed by its unit word or a percent sign ("21 kilograms", "18.3%"): two sources
# giving different figures for one unit clash (``stances.figure_clash``). A unit is two
# letters or more, so "5 m" has none here, unlike MEASURE.
FIGURE_WITH_UNIT = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s*(%|percent\b|[a-zA-Z]{2,})?")

# A measured quantity with its unit, glued or spaced, one letter or more, degrees and rates
# included ("15 m", "50ft", "9 °C", "3 km/h"): does a sentence give a length, a time, a speed
# (``question.measured``).
MEASURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(°?[a-zA-Z%/]+)?")

# A figure as a table or a question writes it, inside a word too ("susv3", "COVID-19"), without
# its sign or unit: "-5" and "50%" are asked of the rows "-5" and "50%" (``rows``).
CELL_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


def numeric(text: str) -> bool:
    """A cell that is a figure ("1,200", "4.5", "50%"): what Python reads as a float."""
    try:
        float(text.replace(",", "").rstrip("%"))
    except ValueError:
        return False
    return True


# -- years -----------------------------------------------------------------------------------
# The two ranges were set apart and are kept as found: folding them would change which numbers
# count as years in one of the two places, a change of behaviour for a measured step.
# A year in prose, 1500-2099 (a date question's answer may be a historical year): the judge's
# reading of "when" questions and of dates two sources disagree on.
YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")

# Years a table's header columns may be named by, 1800-2100 (a statistics office's wide table,
# "Country | Code | 1960 | 1961 | …"): ``tables.looks_like_header``.
HEADER_YEARS = range(1800, 2101)
